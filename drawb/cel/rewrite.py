"""Source text rewriting and scanning before the C++ checker sees an expression.

`presence_of_device_fields` makes `has(device.<field>)` mean what it means in cel-go;
`in_string_literal` tells which characters are inside string literals; `nesting_depth` measures
how deep brackets nest (the C++ parser stops at 32 levels, cel-go at 250).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drawb.cel.spec import EnvSpec


_HAS_DEVICE_FIELD = re.compile(r"\bhas\s*\(\s*device\s*\.\s*(driver|attributes|capacity|allowMultipleAllocations)\s*\)")


def presence_of_device_fields(expression: str, spec: EnvSpec) -> str:
    """`has(device.<declared field>)` as a same-length `true` (always true in cel-go; the C++ checker,
    which sees the fields as qualified variables, would type it as the field itself)."""

    if "has" not in expression:
        return expression
    literal = in_string_literal(expression)

    def replace(m: re.Match) -> str:
        if literal[m.start()] or (m.group(1) == "allowMultipleAllocations" and not spec.allow_multiple_allocations):
            return m.group(0)
        width = len(m.group(0))
        return "(true" + " " * (width - 6) + ")"

    return _HAS_DEVICE_FIELD.sub(replace, expression)


_TRIPLE_QUOTES = ("'" * 3, '"' * 3)


def in_string_literal(text: str) -> list[bool]:
    """Per character: inside a CEL string or bytes literal (quotes, triple quotes, raw, escapes)."""
    out = [False] * (len(text) + 1)
    i = 0
    while i < len(text):
        c = text[i]
        if c not in ("'", '"'):
            i += 1
            continue
        raw = i > 0 and text[i - 1] in "rR"
        quote = text[i : i + 3] if text[i : i + 3] in _TRIPLE_QUOTES else c
        j = i + len(quote)
        while j < len(text) and not text.startswith(quote, j):
            j += 2 if (text[j] == "\\" and not raw) else 1
        end = min(j + len(quote), len(text))
        for k in range(i, end):
            out[k] = True
        i = end
    return out


def nesting_depth(expression: str) -> int:
    """The deepest nesting of brackets outside string literals."""
    literal = in_string_literal(expression)
    depth = deepest = 0
    for i, c in enumerate(expression):
        if literal[i]:
            continue
        if c in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in ")]}":
            depth -= 1
    return deepest
