"""The rewrite of one workload document as edits of its text: only the lines that change are touched.

A legacy limit or request goes with the lines its key and value stand on (the ``limits:`` or
``requests:`` line too when none is left; comment and blank lines stay); the claims go in as new
lines after the last line of the mapping they join (``resources.claims``, ``spec.resourceClaims``)
or after the last item of the list they extend, at the columns the document uses. A flow collection
(``{...}``, ``[...]``) is edited inside its brackets. Every other character stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from drawb.api.workloads import Path
from drawb.convert.edits import Edit, Lines, apply, child, entry
from drawb.migrate.claims import Plan
from drawb.migrate.legacy import Workload, device_for

SECTIONS = ("limits", "requests")


@dataclass(frozen=True)
class _Style:
    """How the document writes a block list under a key: the dash's column after the key's, and the
    columns from the dash to the item's first key."""

    offset: int = 0
    gap: int = 2

    @classmethod
    def of(cls, lines: Lines, root: Node) -> _Style:
        """The style of the first block list of mappings under a key in ``root`` (kubectl's where there is none)."""
        pending = [root]
        while pending:
            node = pending.pop(0)
            if not isinstance(node, MappingNode) or node.flow_style:
                continue
            for key, value in node.value:
                if isinstance(value, SequenceNode) and not value.flow_style and value.value and \
                        isinstance(value.value[0], MappingNode) and value.value[0].value:
                    dash, column = _dash(lines, value.value[0])
                    if dash is not None:
                        return cls(dash - key.start_mark.column, column - dash)
                pending += [value] + (list(value.value) if isinstance(value, SequenceNode) else [])
        return cls()


def _dash(lines: Lines, item: MappingNode) -> tuple[int | None, int]:
    """(column of the dash that opens ``item``, column of its first key); no dash when the item does not open its line."""
    key = item.value[0][0]
    before = lines.lines[key.start_mark.line][:key.start_mark.column]
    stripped = before.rstrip()
    return (len(stripped) - 1 if stripped.endswith("-") else None), key.start_mark.column


def node_at(root: Node, path: Path) -> Node | None:
    """The node at ``path`` (mapping keys and list indexes) below ``root``, or None."""
    node: Node | None = root
    for step in path:
        if isinstance(step, int):
            node = node.value[step] if isinstance(node, SequenceNode) and step < len(node.value) else None
        else:
            node = child(node, step)
    return node


def _scalar(node: Node | None) -> str:
    return str(node.value) if isinstance(node, ScalarNode) else ""


def _text(lines: Lines, node: Node) -> str:
    return lines.text[node.start_mark.index:node.end_mark.index]


def _pair_text(lines: Lines, key: Node, value: Node) -> str:
    return lines.text[key.start_mark.index:max(key.end_mark.index, value.end_mark.index)]


def _is_legacy(key: Node) -> bool:
    return isinstance(key, ScalarNode) and device_for(str(key.value)) is not None


def _flow_item(fields: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in fields.items()) + "}"


def _flow(lines: Lines, like: Node, parts: list[str], open_: str = "{", close: str = "}") -> str:
    """``parts`` in brackets, spaced inside as ``like`` is (``{ a: 1 }`` or ``{a: 1}``)."""
    pad = " " if _text(lines, like).startswith(open_ + " ") else ""
    return open_ + pad + ", ".join(parts) + pad + close


def _insert_in_flow(lines: Lines, collection: Node, parts: list[str]) -> Edit:
    """``parts`` added at the end of a flow collection, before its closing bracket."""
    at = collection.end_mark.index - 1
    while at > collection.start_mark.index + 1 and lines.text[at - 1] in " \t":
        at -= 1  # after the last item, before the spaces that pad the bracket
    return Edit(at, at, (", " if collection.value else "") + ", ".join(parts))


def _delete_lines(lines: Lines, numbers: set[int]) -> list[Edit]:
    return [Edit(lines.offset(n), lines.offset(n + 1), "") for n in sorted(numbers)]


def _insert_after(lines: Lines, line: int, new: list[str]) -> Edit:
    """Whole new lines after line ``line`` (0-based), ended as the text ends its lines."""
    at = lines.offset(line + 1)
    body = "".join(text + lines.eol for text in new)
    if at == len(lines.text) and lines.text and not lines.text.endswith("\n"):
        body = lines.eol + body[:-len(lines.eol)]
    return Edit(at, at, body)


def _block_items(column: int, gap: int, items: list[dict[str, str]]) -> list[str]:
    """Block list items with their dash at ``column`` and their keys ``gap`` columns after it."""
    out = []
    for item in items:
        for i, (key, value) in enumerate(item.items()):
            lead = ("-" + " " * (gap - 1)) if i == 0 else " " * gap
            out.append(" " * column + lead + f"{key}: {value}")
    return out


def _add_list_items(lines: Lines, style: _Style, mapping: Node, key: str, items: list[dict[str, str]]) -> list[Edit]:
    """``items`` at the end of list ``key`` of ``mapping``; the key and the list made where there is none."""
    found = entry(mapping, key) if isinstance(mapping, MappingNode) else None
    flow_items = [_flow_item(i) for i in items]
    if found is not None and isinstance(found[1], SequenceNode):
        seq = found[1]
        if seq.flow_style:
            return [_insert_in_flow(lines, seq, flow_items)]
        first = seq.value[0]
        dash, column = _dash(lines, first) if isinstance(first, MappingNode) and first.value else (None, 0)
        if dash is None:  # a list of something other than mappings opening their lines: the document's style
            dash, column = found[0].start_mark.column + style.offset, found[0].start_mark.column + style.offset + style.gap
        return [_insert_after(lines, lines.last_line(seq), _block_items(dash, column - dash, items))]
    if found is not None:  # ``key:`` with no list (null): its lines give way to the list
        at = found[1].start_mark.index
        space = " " if lines.text[at - 1] == ":" else ""
        return [Edit(at, found[1].end_mark.index, space + "[" + ", ".join(flow_items) + "]")]
    if mapping.flow_style:
        return [_insert_in_flow(lines, mapping, [f"{key}: [{', '.join(flow_items)}]"])]
    column = mapping.value[0][0].start_mark.column
    new = [" " * column + f"{key}:"] + _block_items(column + style.offset, style.gap, items)
    return [_insert_after(lines, lines.last_line(mapping), new)]


def _flow_resources(lines: Lines, resources: MappingNode, claims: list[dict[str, str]]) -> Edit:
    """A flow ``resources`` mapping written again: legacy entries out, the claims in."""
    parts = []
    named = [_flow_item(c) for c in claims]
    for key, value in resources.value:
        name = _scalar(key)
        if name in SECTIONS and isinstance(value, MappingNode):
            kept = [_pair_text(lines, k, v) for k, v in value.value if not _is_legacy(k)]
            if kept:
                parts.append(f"{_text(lines, key)}: {_flow(lines, value, kept)}")
        elif name == "claims" and isinstance(value, SequenceNode):
            parts.append(f"{_text(lines, key)}: [{', '.join([_text(lines, v) for v in value.value] + named)}]")
            named = []
        else:
            parts.append(_pair_text(lines, key, value))
    if named:
        parts.append(f"claims: [{', '.join(named)}]")
    return Edit(resources.start_mark.index, resources.end_mark.index, _flow(lines, resources, parts))


def _legacy_out(lines: Lines, resources: MappingNode) -> list[Edit]:
    """Edits that take the legacy entries out of ``limits`` and ``requests`` of a block ``resources``."""
    edits: list[Edit] = []
    gone: set[int] = set()
    for key, value in resources.value:
        if _scalar(key) not in SECTIONS or not isinstance(value, MappingNode):
            continue
        legacy = [(k, v) for k, v in value.value if _is_legacy(k)]
        if not legacy:
            continue
        kept = [(k, v) for k, v in value.value if not _is_legacy(k)]
        if value.flow_style and kept:
            edits.append(Edit(value.start_mark.index, value.end_mark.index,
                              _flow(lines, value, [_pair_text(lines, k, v) for k, v in kept])))
            continue
        if not kept:
            gone |= set(range(key.start_mark.line, lines.last_line(value) + 1)) if value.flow_style \
                else {key.start_mark.line}
        if not value.flow_style:
            for k, v in legacy:
                gone |= set(range(k.start_mark.line, lines.last_line(v) + 1))
    return edits + _delete_lines(lines, gone)


def rewrite_text(text: str, root: Node, workload: Workload, plan: Plan) -> str:
    """``text`` (one document, composed as ``root``) with ``workload``'s legacy requests replaced by ``plan``'s claims."""
    lines = Lines(text)
    style = _Style.of(lines, root)
    edits: list[Edit] = []
    done: set[int] = set()
    for pod in workload.asking_pods():
        spec = node_at(root, workload.pods[pod])
        for group in ("initContainers", "containers"):
            containers = child(spec, group)
            for container in containers.value if isinstance(containers, SequenceNode) else []:
                entries = plan.entries_of(_scalar(child(container, "name")), pod)
                resources = child(container, "resources")
                if not entries or not isinstance(resources, MappingNode) or id(resources) in done:
                    continue
                done.add(id(resources))  # an alias shares its anchor's node: edited once
                claims = [{"name": e} for e in entries]
                if resources.flow_style:
                    edits.append(_flow_resources(lines, resources, claims))
                else:
                    edits += _legacy_out(lines, resources)
                    edits += _add_list_items(lines, style, resources, "claims", claims)
        entries = [{"name": c.entry, "resourceClaimTemplateName": c.template} for c in plan.claims if c.pod == pod]
        edits += _add_list_items(lines, style, spec, "resourceClaims", entries)
    return apply(text, edits)
