"""The errors of ``convert``: input it cannot read, and targets it does not write."""

from __future__ import annotations

from drawb.errors import DrawbError


class ConvertInputNotYaml(DrawbError):
    """A file given to convert is not YAML (the message names the file and line)."""

    title = "ManifestNotYaml"
    hint = "fix the YAML at that line (an editor with a YAML linter shows the spot); nothing was written"


class ConvertOutputRefused(DrawbError):
    """``--out`` names a place convert will not write (an input, or one file for several inputs)."""
