"""`fastgo compare`: two configs learning for equal time, their matches and report."""
