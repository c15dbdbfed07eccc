"""The run's infrastructure, apart from the Go kernel (fastgo): the config, the run directory and
its state files, the roles' entry, experience shards and game records, the ratings table and the
opponent pool. It may import the kernel (and its bounded reads and atomic writes, fastgo.files);
the kernel never imports it (tests/unit/test_layout.py)."""
