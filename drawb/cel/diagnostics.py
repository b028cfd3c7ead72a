"""The C++ checker's error text reworded as the API server (cel-go) words it: ``Issues.String()``.

The C++ checker finds the same errors as cel-go but names and places some differently (prefixes and
suffixes, macro wording, undeclared `device.<field>` references, overloads of member calls, `&&`/`||`
operands); `issues_text` rewrites its status text issue by issue, with cel-go's source line and caret.
"""

from __future__ import annotations

import re

from drawb.cel.ast import CheckedAst

_CPP_PREFIX = re.compile(r"^[A-Z_]+: ")
_CPP_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_DEVICE_FIELD = re.compile(r"undeclared reference to 'device\.([A-Za-z_][A-Za-z0-9_]*)' \(in container ''\)")
_DEVICE_SELECT = "expression of type 'kubernetes.DRADevice' cannot be the operand of a select operation"


_ISSUE = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']+)' applied to '\((.*)\)'")
_UNDECLARED = re.compile(r"undeclared reference to '([^']+)' \(in container ''\)")
# The C++ parser's macro messages as cel-go words them.
_MACRO_MESSAGES = {
    "has() argument must be a field selection": "invalid argument to has() macro",
    "cel.bind() variable name must be a simple identifier": "cel.bind() variable names must be simple identifiers",
}
_MACRO_NAME = re.compile(r"\w+\(\) variable name must be a simple identifier")
_CPP_TYPE_NAMES = (("google.protobuf.Duration", "duration"), ("google.protobuf.Timestamp", "timestamp"))
_NAMESPACES = {"device", "cel", "optional", "sets", "lists", "strings", "format", "ip"}


def _split_types(text: str) -> list[str]:
    """Top-level comma split of a type list such as `map(string, int), bool`."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        out.append(text[start:].strip())
    return out


def _offset(expression: str, line: int, col: int) -> int:
    lines = expression.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + col - 1


def issues_text(raw: str, expression: str, parsed: CheckedAst | None) -> str:
    """The C++ checker's status text as cel-go's `Issues.String()`."""
    text = _CPP_SUFFIX.sub("", _CPP_PREFIX.sub("", raw.strip()))
    for cpp, go in _CPP_TYPE_NAMES:
        text = text.replace(cpp, go)
    by_offset = {}
    if parsed is not None:
        for node in parsed.nodes.values():
            by_offset.setdefault(parsed.positions.get(node.id, -1), []).append(node)
    issues: list[tuple[int, str]] = []
    for block in re.split(r"\n(?=ERROR: )", text):
        m = _ISSUE.match(block)
        if m is None:
            return text
        offset = _offset(expression, int(m.group(1)), int(m.group(2)))
        message = m.group(3)
        if "*error*" in message:
            continue  # cel-go does not report follow-up errors on operands already in error
        message = _DEVICE_FIELD.sub(lambda f: f"undefined field '{f.group(1)}'", message)
        message = _MACRO_MESSAGES.get(message, message)
        if _MACRO_NAME.fullmatch(message):
            message = "argument must be a simple name"
        nodes = by_offset.get(offset, [])
        if message == _DEVICE_SELECT:
            select = next((n for n in nodes if n.kind == "select"), None)
            if select is not None:
                message = f"undefined field '{select.name}'"
        over = _NO_OVERLOAD.fullmatch(message)
        if over is not None:
            call = next((n for n in nodes if n.kind == "call" and n.name == over.group(1)), None)
            if call is not None and over.group(1) in ("_&&_", "_||_"):
                types = _split_types(over.group(2))
                for operand, t in zip(call.args, types):
                    if t not in ("bool", "dyn", "any"):
                        issues.append((parsed.positions.get(operand.id, offset), f"expected type 'bool' but found '{t}'"))
                continue
            if call is not None and call.target is not None:
                types = _split_types(over.group(2))
                message = f"found no matching overload for '{over.group(1)}' applied to '{types[0]}.({', '.join(types[1:])})'"
        undeclared = _UNDECLARED.fullmatch(message)
        if undeclared is not None and "." in undeclared.group(1):
            root = undeclared.group(1).split(".")[0]
            if root not in _NAMESPACES:
                node = next((n for n in nodes if n.kind == "select"), None)
                while node is not None and node.kind == "select":
                    node = node.target
                if node is not None and node.kind == "ident":
                    offset = parsed.positions.get(node.id, offset)
                    message = f"undeclared reference to '{node.name}' (in container '')"
        issues.append((offset, message))
    return "\n".join(format_issue(expression, off, msg) for off, msg in issues)


def _location(ast_or_text: str, offset: int) -> tuple[int, int]:
    line = ast_or_text.count("\n", 0, offset) + 1
    col = offset - (ast_or_text.rfind("\n", 0, offset) + 1)
    return line, col


def format_issue(expression: str, offset: int, message: str) -> str:
    """cel-go's issue format: `ERROR: <input>:L:C: msg` plus the source line and a caret."""
    line, col = _location(expression, offset)
    source = expression.split("\n")[line - 1]
    caret = "." * col + "^"
    out = f"ERROR: <input>:{line}:{col + 1}: {message}"
    if source.strip():
        out += f"\n | {source}\n | {caret}"
    return out
