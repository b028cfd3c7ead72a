"""Write a file whole or not at all: the text goes to a temporary file beside it, then replaces it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike, data: str | bytes, *, make_folders: bool = True) -> Path:
    """Write ``data`` (text as UTF-8, newlines unchanged) to ``path`` so that a reader sees the old file or
    the new one, never a part; missing folders are made unless ``make_folders`` is false. The temporary
    file (mode 0600) is removed on any error or interrupt; an ``OSError`` is raised for the caller to name."""
    target = Path(path)
    if make_folders:
        target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
