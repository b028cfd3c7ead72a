"""cel-go's checks that the C++ checker does not make, run on the checked tree.

The Kubernetes base environment turns on cel-go's validators (homogeneous aggregate literals,
duration, timestamp and regex literals, and `string.format` calls); the planner also compiles
constant regular expressions, so a bad one fails at program instantiation.
"""

from __future__ import annotations

import re

from drawb.cel.ast import CheckedAst, Node, Type
from drawb.cel.library import compile_re
from drawb.cel.values import CelError


def homogeneous_errors(ast: CheckedAst, expression: str) -> list[tuple[int, str]]:
    """cel-go's homogeneous aggregate literal validator (literals inside `format` calls are exempt)."""
    issues: list[tuple[int, str]] = []

    def elem_type(node: Node, optional: bool) -> Type:
        t = node.type
        if optional and t.kind == "opaque" and t.name == "optional_type" and t.params:
            return t.params[0]
        return t

    def mismatch(node: Node, expected: Type, actual: Type) -> None:
        issues.append((ast.positions.get(node.id, 0), f"expected type '{expected}' but found '{actual}'"))

    def walk(node: Node, exempt: bool) -> None:
        if node.kind == "list" and not exempt:
            optional = set(node.optional_indices)
            first: Type | None = None
            for i, element in enumerate(node.args):
                t = elem_type(element, i in optional)
                if first is None:
                    first = t
                elif t != first:
                    mismatch(element, first, t)
                    break
        elif node.kind == "map" and not exempt:
            key_type = val_type = None
            for key, value, optional in node.entries:
                kt, vt = key.type, elem_type(value, optional)
                if key_type is None:
                    key_type, val_type = kt, vt
                    continue
                if kt != key_type:
                    mismatch(key, key_type, kt)
                if vt != val_type:
                    mismatch(value, val_type, vt)
        inner = exempt or (node.kind == "call" and node.name == "format")
        for child in node.children():
            walk(child, inner)

    walk(ast.root, False)
    return issues


_DURATION = re.compile(r"[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)\Z")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})\Z")


_FORMAT_VERBS = set("sdfebxXo")


def format_call_errors(ast: CheckedAst) -> list[tuple[int, str]]:
    """cel-go's string.format validator: clause syntax and argument count of literal format calls."""
    issues: list[tuple[int, str]] = []
    for node in ast.nodes.values():
        if node.kind != "call" or node.name != "format" or node.target is None or len(node.args) != 1:
            continue
        target, args = node.target, node.args[0]
        if target.kind != "const" or not isinstance(target.value, str) or args.kind != "list":
            continue
        error = _check_format_string(target.value, len(args.args))
        if error is not None:
            issues.append((ast.positions.get(node.id, 0), error))
    return issues


def _check_format_string(text: str, size: int) -> str | None:
    i = requested = 0
    while i < len(text):
        if text[i] != "%":
            i += 1
            continue
        if i + 1 < len(text) and text[i + 1] == "%":
            i += 2
            continue
        requested += 1
        if i + 1 >= len(text):
            return "unexpected end of string"
        if requested > size:
            return f"index {requested - 1} out of range"
        i += 1
        if text[i] == ".":
            i += 1
            while i < len(text) and text[i].isdigit():
                i += 1
            if i >= len(text):
                return "could not parse formatting clause: error while parsing precision: could not find end of precision specifier"
        if text[i] not in _FORMAT_VERBS:
            return f'could not parse formatting clause: unrecognized formatting clause "{text[i]}"'
        i += 1
    if size > requested:
        return f"too many arguments supplied to string.format (expected {requested}, got {size})"
    return None


def constant_regex_error(ast: CheckedAst) -> str | None:
    """Patterns the planner precompiles (`matches`, `find`, `findAll` with a literal pattern)."""
    for node in ast.nodes.values():
        if node.kind != "call" or node.name not in ("matches", "find", "findAll"):
            continue
        index = 0 if node.target is not None else 1
        if len(node.args) <= index:
            continue
        pattern = node.args[index]
        if pattern.kind == "const" and isinstance(pattern.value, str):
            try:
                compile_re(pattern.value)
            except CelError as err:
                return err.message
    return None


def literal_errors(ast: CheckedAst) -> list[tuple[int, str]]:
    """cel-go's duration, timestamp and regex literal validators (Kubernetes base environment, 1.29+)."""
    issues: list[tuple[int, str]] = []
    for node in ast.nodes.values():
        if node.kind != "call" or not node.args or node.name not in ("duration", "timestamp", "matches"):
            continue
        arg = node.args[0]
        if arg.kind != "const" or not isinstance(arg.value, str):
            continue
        if node.name == "matches":
            try:
                compile_re(arg.value)
                continue
            except CelError:
                pass
        elif node.name == "duration" and _DURATION.match(arg.value):
            continue
        elif node.name == "timestamp" and _TIMESTAMP.match(arg.value):
            continue
        issues.append((ast.positions.get(arg.id, 0), f"invalid {node.name} argument"))
    return issues


def extra_issues(ast: CheckedAst, expression: str) -> list[tuple[int, str]]:
    """The issues of cel-go's validators, as (offset, message), in source order."""
    return sorted(literal_errors(ast) + format_call_errors(ast) + homogeneous_errors(ast, expression))
