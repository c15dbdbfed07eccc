"""The supervision of a run (`fastgo cluster`): the supervision loop, the local and Ray
launchers, a role's process, restarts and the status line."""
