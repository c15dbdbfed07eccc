"""fastgo kernels: the board and rules, feature planes, symmetries, the search tree and random
playouts (Cython), plus pure-Python Go formats (coordinates, SGF, GTP). Imports numpy only."""
