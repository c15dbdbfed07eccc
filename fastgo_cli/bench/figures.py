"""Where a bench's figures go besides its printed lines: `--json FILE`, written whole."""
from __future__ import annotations

from fastgo import bounded_json
from fastgo.files import atomic_write_text


def write_json(path, figures) -> None:
    """The figures as JSON at `path` (a temporary name, then renamed: a reader never sees half
    of them), when one was asked for (`path` not None or empty)."""
    if path:
        atomic_write_text(path, bounded_json.dumps(figures, indent=2) + "\n")
