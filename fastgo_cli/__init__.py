"""The one `fastgo` command and, later, the supervisor that runs the whole loop."""
