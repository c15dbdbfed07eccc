"""The supervisor of a whole run: role processes (local or Ray), restarts, the status line, the
evaluator role and the plots."""
