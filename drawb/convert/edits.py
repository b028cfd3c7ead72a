"""Edits of YAML text that touch only the lines they change: nest keys, unwrap a key, drop keys, replace a value.

Each edit works on the composed node tree (``ruamel.yaml``'s nodes, with their positions in the text) and
yields ``Edit(start, end, text)``: the characters to replace. Block mappings are edited line by line,
moving whole lines and shifting their indentation (comments and blank lines inside a moved key move with
it); flow mappings (``{a: 1, b: 2}``) are written again from their entries' own text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``text``."""

    start: int
    end: int
    text: str


def apply(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with ``edits`` (which must not overlap) made."""
    out, at = [], 0
    for edit in sorted(edits, key=lambda e: e.start):
        out += [text[at:edit.start], edit.text]
        at = edit.end
    return "".join(out) + text[at:]


def entry(mapping: MappingNode, key: str) -> tuple[ScalarNode, Node] | None:
    """The (key node, value node) of ``key`` in ``mapping``, if present."""
    for k, v in mapping.value:
        if isinstance(k, ScalarNode) and k.value == key:
            return k, v
    return None


def child(node: Node | None, *path: str) -> Node | None:
    """The node at ``path`` of mapping keys below ``node``, or None."""
    for key in path:
        found = entry(node, key) if isinstance(node, MappingNode) else None
        node = found[1] if found else None
    return node


def is_null(node: Node) -> bool:
    """Whether ``node`` is YAML's null (``~``, ``null`` or nothing)."""
    return isinstance(node, ScalarNode) and node.tag.endswith(":null")


def is_empty_flow(node: Node) -> bool:
    """Whether ``node`` is ``{}`` or ``[]``."""
    return isinstance(node, (MappingNode, SequenceNode)) and not node.value


class Lines:
    """The text as lines (each with its line break), with the character offset of each."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.eol = "\r\n" if "\r\n" in text else "\n"

    def offset(self, line: int) -> int:
        """The character offset where ``line`` (0-based) starts; the text's end past the last."""
        return self.starts[min(line, len(self.lines))]

    def last_line(self, node: Node) -> int:
        """The last line that holds ``node``'s content (a block scalar's content, a collection's last item)."""
        if isinstance(node, MappingNode) and node.value and not node.flow_style:
            return self.last_line(node.value[-1][1])
        if isinstance(node, SequenceNode) and node.value and not node.flow_style:
            return self.last_line(node.value[-1])
        end = node.end_mark
        return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line

    def block_spans(self, mapping: MappingNode) -> list[tuple[str, int, int]]:
        """(key, first line, end line) of each entry of a block mapping: an entry runs to the next key, the
        last one to its last line of content (the comment lines after a mapping stay where they are)."""
        keys = [(str(k.value), k.start_mark.line) for k, _ in mapping.value]
        ends = [line for _, line in keys[1:]] + [self.last_line(mapping.value[-1][1]) + 1]
        return [(key, first, end) for (key, first), end in zip(keys, ends)]

    def opens_item(self, key: ScalarNode) -> bool:
        """Whether ``key`` follows a sequence dash on its line (``- name: x``)."""
        line = self.lines[key.start_mark.line]
        return line[:key.start_mark.column].strip() != ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def shift(lines: list[str], delta: int) -> list[str]:
    """``lines`` moved ``delta`` columns right (left when negative); blank lines stay, a line never loses text."""
    out = []
    for line in lines:
        if not line.strip():
            out.append(line)
        elif delta >= 0:
            out.append(" " * delta + line)
        else:
            out.append(line[min(-delta, _indent(line)):])
    return out


def _flow_key(like: ScalarNode, key: str) -> str:
    return f'"{key}"' if like.style == '"' else (f"'{key}'" if like.style == "'" else key)


def _entry_text(text: str, key: Node, value: Node) -> str:
    return text[key.start_mark.index:max(value.end_mark.index, key.end_mark.index)]


def _layout(lines: Lines, mapping: MappingNode) -> tuple[int, int] | None:
    """(column of the entries, column of the closing ``}``) of a flow mapping written one entry per line
    (pretty-printed JSON); None for one written on one line."""
    if not mapping.value or mapping.value[0][0].start_mark.line == mapping.start_mark.line:
        return None
    return mapping.value[0][0].start_mark.column, _indent(lines.lines[mapping.end_mark.line])


def _reindent(text: str, delta: int) -> str:
    """``text`` with every line after its first moved ``delta`` columns."""
    head, *rest = text.split("\n")
    return "\n".join([head, *shift(rest, delta)])


def _braced(lines: Lines, parts: list[str], layout: tuple[int, int] | None, pad: str = "") -> str:
    """``{parts}``: on one line, or one part per line at ``layout``'s columns."""
    if layout is None:
        return "{" + pad + ", ".join(parts) + pad + "}"
    column, close = layout
    return ("{" + lines.eol + " " * column + ("," + lines.eol + " " * column).join(parts) + lines.eol
            + " " * close + "}")


def _flow_mapping(lines: Lines, mapping: MappingNode, parts: list[str]) -> Edit:
    """Write flow ``mapping`` again with ``parts`` (each ``key: value`` text), laid out as it was."""
    original = lines.text[mapping.start_mark.index:mapping.end_mark.index]
    new = _braced(lines, parts, _layout(lines, mapping), " " if original.startswith("{ ") else "")
    return Edit(mapping.start_mark.index, mapping.end_mark.index, new)


def nest(lines: Lines, mapping: MappingNode, keys: tuple[str, ...], under: str, step: int) -> Edit | None:
    """Move the entries of ``keys`` in ``mapping`` under a new key ``under`` (placed where the first was)."""
    moved = [i for i, (k, _) in enumerate(mapping.value) if k.value in keys]
    if not moved:
        return None
    text = lines.text
    if mapping.flow_style:
        texts = [_entry_text(text, k, v) for k, v in mapping.value]
        layout = _layout(lines, mapping)
        if layout is None:
            inner = _braced(lines, [texts[i] for i in moved], None)
        else:  # one entry per line: the nested ones one step further in
            column, close = layout
            inner = _braced(lines, [_reindent(texts[i], column - close) for i in moved],
                            (2 * column - close, column))
        new = f"{_flow_key(mapping.value[moved[0]][0], under)}: {inner}"
        parts = [t for i, t in enumerate(texts) if i < moved[0]] + [new]
        parts += [t for i, t in enumerate(texts) if i > moved[0] and i not in moved]
        return _flow_mapping(lines, mapping, parts)
    spans = lines.block_spans(mapping)
    first_key = mapping.value[moved[0]][0]
    column = first_key.start_mark.column
    head_line = lines.lines[first_key.start_mark.line]
    prefix = head_line[:column] if lines.opens_item(first_key) else " " * column
    out = [prefix + under + ":" + lines.eol]
    for i in moved:
        _, first, end = spans[i]
        block = lines.lines[first:end]
        if i == moved[0] and lines.opens_item(first_key):
            block = [" " * column + block[0][column:], *block[1:]]
        out += shift(block, step)
    for i in range(moved[0] + 1, len(spans)):
        if i not in moved:
            out += lines.lines[spans[i][1]:spans[i][2]]
    start, end = spans[moved[0]][1], spans[-1][2]
    return Edit(lines.offset(start), lines.offset(end), _terminated("".join(out), lines, end))


def _terminated(new: str, lines: Lines, end: int) -> str:
    """``new`` ending as the replaced lines ended (without a line break at the end of a text that has none)."""
    replaced = lines.text[lines.offset(end) - 1:lines.offset(end)] if end else ""
    if replaced and replaced != "\n" and new.endswith(lines.eol):
        return new[:-len(lines.eol)]
    return new


def drop(lines: Lines, mapping: MappingNode, keys: tuple[str, ...]) -> Edit | None:
    """Remove the entries of ``keys`` from ``mapping``."""
    gone = [i for i, (k, _) in enumerate(mapping.value) if k.value in keys]
    return replace_entries(lines, mapping, {i: [] for i in gone}) if gone else None


def unwrap(lines: Lines, mapping: MappingNode, key: str) -> Edit | None:
    """Put the entries of ``key``'s mapping value in ``mapping`` itself, in ``key``'s place."""
    found = [i for i, (k, _) in enumerate(mapping.value) if k.value == key]
    if not found:
        return None
    index = found[0]
    key_node, value = mapping.value[index]
    text = lines.text
    if is_null(value) or is_empty_flow(value):
        return replace_entries(lines, mapping, {index: []})
    if not isinstance(value, MappingNode):
        return None  # not a mapping: the API server refuses it; left for validate to name
    if mapping.flow_style or value.flow_style:
        delta = key_node.start_mark.column - value.value[0][0].start_mark.column
        inner = [_reindent(_entry_text(text, k, v), delta) for k, v in value.value]
        if mapping.flow_style:
            texts = [_entry_text(text, k, v) for k, v in mapping.value]
            return _flow_mapping(lines, mapping, texts[:index] + inner + texts[index + 1:])
        return replace_entries(lines, mapping, {index: inner})
    spans = lines.block_spans(mapping)
    _, first, end = spans[index]
    column = key_node.start_mark.column
    delta = column - value.value[0][0].start_mark.column
    head = lines.lines[first]
    comment = head[key_node.end_mark.column:].strip().removeprefix(":").strip()
    out = [" " * _indent(head) + comment + lines.eol] if comment.startswith("#") else []
    body = lines.lines[first + 1:end]
    if lines.opens_item(key_node):
        child_line = value.value[0][0].start_mark.line - first - 1
        body = (shift(body[:child_line], delta) + [head[:column] + body[child_line][column - delta:]]
                + shift(body[child_line + 1:], delta))
    else:
        body = shift(body, delta)
    return Edit(lines.offset(first), lines.offset(end), _terminated("".join(out + body), lines, end))


def replace_entries(lines: Lines, mapping: MappingNode, replacements: dict[int, list[str]]) -> Edit:
    """Replace entries of ``mapping`` (by index) with ``key: value`` texts, each on its own line in a block
    mapping; an empty list removes the entry."""
    text = lines.text
    if mapping.flow_style:
        parts = []
        for i, (k, v) in enumerate(mapping.value):
            parts += replacements.get(i, [_entry_text(text, k, v)])
        return _flow_mapping(lines, mapping, parts)
    spans = lines.block_spans(mapping)
    touched = sorted(replacements)
    start, end = spans[touched[0]][1], spans[touched[-1]][2]
    first_key = mapping.value[touched[0]][0]
    column = first_key.start_mark.column
    dash = lines.opens_item(first_key)
    prefix = lines.lines[start][:column] if dash else " " * column
    out: list[str] = []
    for i in range(touched[0], touched[-1] + 1):
        _, first, stop = spans[i]
        if i not in replacements:
            out += lines.lines[first:stop]
            continue
        key, value = mapping.value[i]
        tail = text[value.end_mark.index:lines.offset(lines.last_line(value) + 1)].rstrip("\r\n")
        new = [" " * column + part for part in replacements[i]]
        if new and tail.strip():
            new[-1] += tail  # the comment after a flow value stays on its line
        out += [line + lines.eol for line in new] + lines.lines[lines.last_line(value) + 1:stop]
    if dash:
        out, start, end = _keep_dash(lines, mapping, out, prefix, column, start, end, touched[-1])
    return Edit(lines.offset(start), lines.offset(end), _terminated("".join(out), lines, end))


def _keep_dash(lines: Lines, mapping: MappingNode, out: list[str], prefix: str, column: int, start: int, end: int,
               last: int) -> tuple[list[str], int, int]:
    """The sequence dash the first replaced entry sat behind, put before the first line that holds a key."""
    for i, line in enumerate(out):
        if line.strip() and not line.lstrip().startswith("#"):
            return out[:i] + [prefix + line[column:]] + out[i + 1:], start, end
    if last + 1 < len(mapping.value):  # everything replaced was removed: the next entry moves up to the dash
        _, first, stop = lines.block_spans(mapping)[last + 1]
        following = lines.lines[first:stop]
        return out + [prefix + following[0][column:]] + following[1:], start, stop
    return out + [prefix.rstrip() + " {}" + lines.eol], start, end
