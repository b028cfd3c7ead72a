"""Regular expressions with RE2 as cel-go uses them (Go's error wording), and the Kubernetes regex library: find, findAll."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

from drawb.cel.decls import I, S, T
from drawb.cel.library._registry import fn, is_int, is_str
from drawb.cel.ranges import ONE, REGEX_LENGTH, STRING_TRAVERSAL, Est
from drawb.cel.values import CelError, dispatch_error


def _find_cost(c, overload, target, args):
    if target is None or not args:
        return None
    size = c.size_of(target)
    string_cost = size.add(ONE).factor(STRING_TRAVERSAL)
    return string_cost.mul(c.size_of(args[0]).factor(REGEX_LENGTH)), Est(0, size.hi)


_RE_OPTIONS = re2.Options()
_RE_OPTIONS.log_errors = False


# RE2's error texts as Go's regexp/syntax words them (cel-go compiles patterns with Go's regexp).
_GO_REGEXP_ERRORS = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "missing (": "unexpected )",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "trailing \\": "trailing backslash at end of expression",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid repetition size": "invalid repeat count",
    "invalid UTF-8": "invalid UTF-8",
    "pattern too large - compile failed": "expression too large",
}


def _go_regexp_error(err: Exception) -> str:
    text = err.args[0] if err.args else str(err)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    code, _, arg = str(text).partition(": ")
    return f"error parsing regexp: {_GO_REGEXP_ERRORS.get(code, code)}: `{arg}`"


@lru_cache(maxsize=4096)
def compile_re(pattern: str) -> Any:
    """An RE2 pattern, compiled once; CelError with Go's regexp wording if it does not parse."""
    try:
        return re2.compile(pattern, _RE_OPTIONS)
    except re2.error as err:
        raise CelError(_go_regexp_error(err)) from None


@lru_cache(maxsize=65_536)
def search(pattern: str, text: str) -> str | None:
    """The first match of an RE2 pattern in text (memoized: selectors repeat the same searches)."""
    m = compile_re(pattern).search(text)
    return m.group(0) if m else None


# --- Kubernetes regex -----------------------------------------------------------------------


@fn("find", ("string_find_string", [S, S], S, True), cost=_find_cost)
def _find(s: Any, pattern: Any) -> str:
    if not (is_str(s) and is_str(pattern)):
        raise dispatch_error("find", s, pattern)
    found = search(pattern, s)
    return found if found is not None else ""


@fn("findAll", ("string_find_all_string", [S, S], T.List(S), True), ("string_find_all_string_int", [S, S, I], T.List(S), True), cost=_find_cost)
def _find_all(s: Any, pattern: Any, limit: Any = -1) -> list:
    if not (is_str(s) and is_str(pattern) and is_int(limit)):
        raise dispatch_error("findAll", s, pattern)
    if limit == 0:
        return []
    out = [m.group(0) for m in compile_re(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]
