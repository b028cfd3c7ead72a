"""cel-go's ext.Strings library, version 2 (charAt, indexOf, lowerAscii, replace, split, format, quote, ...)."""

from __future__ import annotations

import math
from typing import Any

from drawb.cel.ast import UInt
from drawb.cel.decls import I, S, T
from drawb.cel.library._registry import declare_yaml, fn, is_int, is_str
from drawb.cel.library.k8s_lists import list_cost
from drawb.cel.library.standard import to_string
from drawb.cel.ranges import STRING_TRAVERSAL, U64, ZERO, Est
from drawb.cel.values import (
    CelError,
    CelType,
    dispatch_error,
    equals,
    no_such_overload,
    type_name,
)


def _copy_cost(c, overload, target, args):
    """lowerAscii, upperAscii, substring, trim: read the receiver once; the result is at most as long."""
    if target is None:
        return None
    size = c.size_of(target)
    return size.factor(STRING_TRAVERSAL), size


def _replace_cost(c, overload, target, args):
    if target is None or len(args) < 2:
        return None
    size, old, new = c.size_of(target), c.size_of(args[0]), c.size_of(args[1])
    count_hi = count_lo = retained_hi = retained_lo = 0
    if old.lo == 0:
        count_hi = size.hi + 1 if size.hi < U64 else size.hi
        retained_hi = size.hi
    elif new.hi <= old.lo:
        retained_hi = size.hi
    else:
        count_hi = math.ceil(size.hi / old.lo)
    if old.hi == 0:
        count_lo = size.lo + 1 if size.lo < U64 else size.lo
        retained_lo = size.lo
    elif old.hi <= new.lo:
        retained_lo = size.lo
    else:
        count_lo = math.ceil(size.lo / old.hi)
    result = Est(count_lo, count_hi).mul(new).add(Est(retained_lo, retained_hi))
    return size.factor(2 * STRING_TRAVERSAL), result


def _split_cost(c, overload, target, args):
    if target is None:
        return None
    size = c.size_of(target)
    most = size.hi
    if len(args) > 1 and args[1].node is not None and args[1].node.kind == "const":
        limit = args[1].node.value
        if type(limit) is int:
            most = limit % (1 << 64)
    return size.factor(2 * STRING_TRAVERSAL), Est(0, most)


def _join_cost(c, overload, target, args):
    if target is None:
        return None
    size = ZERO
    list_size = c.size_of(target)
    element = c.list_element(target)
    if element is not None:
        size = list_size.mul(c.size_of(element))
    if args:
        separators = Est(max(list_size.lo - 1, 0), max(list_size.hi - 1, 0))
        size = size.add(c.size_of(args[0]).mul(separators))
    return size.factor(STRING_TRAVERSAL), size


@fn("charAt", ("string_char_at_int", [S, I], S, True))
def _char_at(s: Any, i: Any) -> str:
    if not (is_str(s) and is_int(i)):
        raise dispatch_error("charAt", s, i)
    if i < 0 or i > len(s):
        raise CelError(f"index out of range: {i}")
    return s[i : i + 1]


@fn("indexOf", cost=list_cost)
def _index_of(s: Any, sub: Any, offset: Any = 0) -> int:
    if isinstance(s, (list, tuple)):
        for i, item in enumerate(s):
            if equals(item, sub):
                return i
        return -1
    if not (is_str(s) and is_str(sub) and is_int(offset)):
        raise dispatch_error("indexOf", s, sub)
    if offset < 0 or offset > len(s):
        raise CelError(f"index out of range: {offset}")
    return s.find(sub, offset)


@fn("lastIndexOf", cost=list_cost)
def _last_index_of(s: Any, sub: Any, offset: Any = None) -> int:
    if isinstance(s, (list, tuple)):
        for i in range(len(s) - 1, -1, -1):
            if equals(s[i], sub):
                return i
        return -1
    if not (is_str(s) and is_str(sub)):
        raise dispatch_error("lastIndexOf", s, sub)
    if offset is None:
        return s.rfind(sub)
    if offset < 0 or offset >= len(s) and len(s) > 0 or (len(s) == 0 and offset != 0):
        raise CelError(f"index out of range: {offset}")
    return s.rfind(sub, 0, offset + len(sub))


@fn("lowerAscii", ("string_lower_ascii", [S], S, True), cost=_copy_cost)
def _lower_ascii(s: Any) -> str:
    if not is_str(s):
        raise dispatch_error("lowerAscii", s)
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in s)


@fn("upperAscii", ("string_upper_ascii", [S], S, True), cost=_copy_cost)
def _upper_ascii(s: Any) -> str:
    if not is_str(s):
        raise dispatch_error("upperAscii", s)
    return "".join(c.upper() if "a" <= c <= "z" else c for c in s)


@fn("replace", ("string_replace_string_string", [S, S, S], S, True), ("string_replace_string_string_int", [S, S, S, I], S, True), cost=_replace_cost)
def _replace(s: Any, old: Any, new: Any, n: Any = -1) -> str:
    if not (is_str(s) and is_str(old) and is_str(new) and is_int(n)):
        raise dispatch_error("replace", s, old, new)
    return s.replace(old, new, n if n >= 0 else -1)


@fn("split", ("string_split_string", [S, S], T.List(S), True), ("string_split_string_int", [S, S, I], T.List(S), True), cost=_split_cost)
def _split(s: Any, sep: Any, n: Any = -1) -> list:
    if not (is_str(s) and is_str(sep) and is_int(n)):
        raise dispatch_error("split", s, sep)
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if n > 0 and len(chars) > n:
            chars = chars[: n - 1] + ["".join(chars[n - 1 :])]
        return chars
    return s.split(sep, n - 1) if n > 0 else s.split(sep)


@fn("substring", ("string_substring_int", [S, I], S, True), ("string_substring_int_int", [S, I, I], S, True), cost=_copy_cost)
def _substring(s: Any, start: Any, end: Any = None) -> str:
    if not (is_str(s) and is_int(start)):
        raise dispatch_error("substring", s, start)
    if end is None:
        end = len(s)
    if start < 0 or start > len(s):
        raise CelError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise CelError(f"index out of range: {end}")
    if start > end:
        raise CelError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


_UNICODE_SPACE = " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


@fn("trim", ("string_trim", [S], S, True), cost=_copy_cost)
def _trim(s: Any) -> str:
    if not is_str(s):
        raise dispatch_error("trim", s)
    return s.strip(_UNICODE_SPACE)


@fn("join", ("list_join", [T.List(S)], S, True), ("list_join_string", [T.List(S), S], S, True), cost=_join_cost)
def _join(items: Any, sep: Any = "") -> str:
    if not isinstance(items, (list, tuple)) or not is_str(sep):
        raise dispatch_error("join", items, sep)
    for item in items:
        if not is_str(item):
            raise no_such_overload(item)
    return sep.join(items)


@fn("strings.quote", ("strings_quote", [S], S, False))
def _quote(s: Any) -> str:
    if not is_str(s):
        raise dispatch_error("strings.quote", s)
    out = ['"']
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               "\\": "\\\\", '"': '\\"'}  # fmt: skip
    for c in s:
        out.append(escapes.get(c, c))
    out.append('"')
    return "".join(out)


@fn("format", ("string_format", [S, T.List(T.DYN)], S, True))
def _string_format(s: Any, args: Any) -> str:
    if not (is_str(s) and isinstance(args, (list, tuple))):
        raise dispatch_error("format", s, args)
    out, i, argi = [], 0, 0
    while i < len(s):
        c = s[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(s):
            raise CelError("unexpected end of string")
        if s[i] == "%":
            out.append("%")
            i += 1
            continue
        precision = None
        if s[i] == ".":
            j = i + 1
            while j < len(s) and s[j].isdigit():
                j += 1
            precision = int(s[i + 1 : j] or 0)
            i = j
        verb = s[i]
        i += 1
        if argi >= len(args):
            raise CelError(f"index {argi} out of range")
        arg = args[argi]
        argi += 1
        out.append(_format_verb(verb, arg, precision))
    return "".join(out)


def _format_verb(verb: str, arg: Any, precision: int | None) -> str:
    if verb == "s":
        return _format_s(arg)
    if verb == "d":
        if type(arg) in (int, UInt):
            return str(int(arg))
        raise CelError(f"error during formatting: decimal clause can only be used on integers, was given {type_name(arg)}")
    if verb == "f":
        if type(arg) in (int, UInt, float):
            return f"{float(arg):.{6 if precision is None else precision}f}"
        raise CelError(f"error during formatting: fixed-point clause can only be used on doubles, was given {type_name(arg)}")
    if verb == "e":
        return f"{float(arg):.{6 if precision is None else precision}e}"
    if verb == "x":
        if type(arg) in (int, UInt):
            return format(int(arg), "x") if arg >= 0 else "-" + format(-int(arg), "x")
        if is_str(arg):
            return arg.encode().hex()
        if isinstance(arg, bytes):
            return arg.hex()
    if verb == "X":
        return _format_verb("x", arg, precision).upper()
    if verb == "o" and type(arg) in (int, UInt):
        return format(int(arg), "o")
    if verb == "b":
        if type(arg) in (int, UInt):
            return format(int(arg), "b")
        if type(arg) is bool:
            return "1" if arg else "0"
    raise CelError(f'could not parse formatting clause: unrecognized formatting clause "{verb}"')


def _format_s(arg: Any) -> str:
    if isinstance(arg, (list, tuple)):
        return "[" + ", ".join(_format_s(a) for a in arg) + "]"
    if isinstance(arg, dict):
        items = sorted(((_format_s(k), _format_s(v)) for k, v in arg.items()))
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if arg is None:
        return "null"
    if isinstance(arg, CelType):
        return arg.name
    return to_string(arg)


def _yaml_overload(oid: str, target: str, args: list[str]) -> str:
    def ty(name: str, indent: str) -> str:
        if name == "list(A)":
            return (f'{indent}type_name: "list"\n{indent}params:\n'
                    f'{indent}  - type_name: "A"\n{indent}    is_type_param: true\n')
        if name == "A":
            return f'{indent}type_name: "A"\n{indent}is_type_param: true\n'
        return f'{indent}type_name: "{name}"\n'

    out = f'      - id: "{oid}"\n        target:\n{ty(target, "          ")}        args:\n'
    for arg in args:
        out += "          -" + ty(arg, "            ")[11:]
    return out + '        return:\n          type_name: "int"\n'


# `indexOf` / `lastIndexOf` mix ext.Strings overloads with the Kubernetes lists library's
# type-parameterized ones; only the YAML configuration can declare type parameters.
declare_yaml("".join(
    f'  - name: "{name}"\n    overloads:\n'
    + _yaml_overload(f"string_{snake}_string", "string", ["string"])
    + _yaml_overload(f"string_{snake}_string_int", "string", ["string", "int"])
    + _yaml_overload(f"list_a_{snake}_int", "list(A)", ["A"])
    for name, snake in (("indexOf", "index_of"), ("lastIndexOf", "last_index_of"))
))
