"""`fastgo dashboard`: a live web page of a run directory (status, strength on CGOS's scale,
checkpoints, self-play games) and games against any checkpoint with the analysis overlay. It
reads the run directory and never writes it."""
