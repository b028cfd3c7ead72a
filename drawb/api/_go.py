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


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for ``seconds`` (``500ms``, ``1.5s``, ``2m3s``), to the nanosecond."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000:
        return f"{sign}{ns}ns"
    if ns < 1_000_000:
        return f"{sign}{_decimal(ns, 1_000)}µs"
    if ns < 1_000_000_000:
        return f"{sign}{_decimal(ns, 1_000_000)}ms"
    minutes, rest = divmod(ns, 60_000_000_000)
    hours, minutes = divmod(minutes, 60)
    head = (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "")
    return f"{sign}{head}{_decimal(rest, 1_000_000_000)}s"


def _decimal(value: int, unit: int) -> str:
    """``value / unit`` written exactly, without trailing zeros (Go's ``fmtFrac``)."""
    whole, part = divmod(value, unit)
    digits = str(part).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)
