"""Go formatting helpers needed to reproduce Kubernetes error messages byte for byte."""

from __future__ import annotations

import unicodedata

_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v", "\\": r"\\", '"': r"\""}


def _go_printable(c: str) -> bool:
    """Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space."""
    return c == " " or unicodedata.category(c)[0] in "LMNPS"


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote`` (what ``%q`` prints for a string)."""
    out = ['"']
    for c in s:
        esc = _ESCAPES.get(c)
        if esc is not None:
            out.append(esc)
        elif _go_printable(c):
            out.append(c)
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    out.append('"')
    return "".join(out)
