"""`fastgo bench TARGET`: one module per benchmark, each figure beside its ceiling."""
