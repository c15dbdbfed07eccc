"""KataGo's JSON analysis protocol (`fastgo analysis`): the engine, its query checks, rules,
bounded input lines and the reports it writes."""
