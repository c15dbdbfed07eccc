"""fastgo kernels: the rules, scoring and the Python Board, feature planes, symmetries, the
search tree and random playouts (Cython), pure-Python Go formats (coordinates, SGF, GTP) and the
bounded reads and atomic writes every file goes through (files, diskfull), the one bounded JSON
reader (bounded_json). Imports numpy only. The run's
infrastructure (config, run directory, shards, ratings) is the subpackage rundata, which
the kernel never imports."""
