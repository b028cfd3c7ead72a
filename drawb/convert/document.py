"""Convert the DRA documents of one YAML text to ``resource.k8s.io/v1``, touching only the lines that change."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from drawb.convert import facts
from drawb.convert.edits import Edit, Lines, apply, child, drop, entry, nest, unwrap
from drawb.convert.errors import ConvertInputNotYaml


@dataclass
class DocumentChange:
    """What convert did to one document (or why it left it as it was)."""

    index: int  # 0-based position of the document in its text
    item: int | None  # its position in the document's ``items`` when the document is a ``kind: List``
    kind: str
    name: str
    source_version: str
    target_version: str
    changes: list[str] = field(default_factory=list)
    note: str = ""  # why a DRA document of another version was left as it was

    @property
    def label(self) -> str:
        """``Kind/name``."""
        return f"{self.kind}/{self.name}"


def _scalar(node: Node | None) -> str:
    return str(node.value) if isinstance(node, ScalarNode) else ""


def _items(node: Node | None) -> list[MappingNode]:
    return [n for n in node.value if isinstance(n, MappingNode)] if isinstance(node, SequenceNode) else []


def _step(root: MappingNode) -> int:
    """How many columns the document indents a nested mapping (2 where it cannot tell)."""
    for key, value in root.value:
        if isinstance(value, MappingNode) and value.value and not value.flow_style:
            step = value.value[0][0].start_mark.column - key.start_mark.column
            if step > 0:
                return step
    return 2


def _nest_requests(lines: Lines, spec: Node | None, step: int, change: DocumentChange) -> list[Edit]:
    edits = []
    for request in _items(child(spec, "devices", "requests")):
        moved = [str(k.value) for k, _ in request.value if k.value in facts.EXACT_FIELDS]
        edit = nest(lines, request, facts.EXACT_FIELDS, facts.EXACT_KEY, step)
        if edit is not None:
            edits.append(edit)
            name = _scalar(child(request, "name")) or "?"
            change.changes.append(f"request {name!r}: {', '.join(moved)} under {facts.EXACT_KEY}:")
    return edits


def _unwrap_devices(lines: Lines, spec: Node | None, change: DocumentChange) -> list[Edit]:
    edits = []
    for device in _items(child(spec, "devices")):
        edit = unwrap(lines, device, facts.BASIC_KEY)
        if edit is not None:
            edits.append(edit)
            change.changes.append(f"device {_scalar(child(device, 'name')) or '?'!r}: {facts.BASIC_KEY}: unwrapped")
    return edits


def _empty_slice_fields(spec: Node | None) -> tuple[str, ...]:
    """The v1beta1 slice fields set to the empty value v1 does not keep (``nodeName: ""``, ``allNodes: false``)."""
    found = []
    for key, empty in facts.SLICE_EMPTY_VALUES.items():
        pair = entry(spec, key) if isinstance(spec, MappingNode) else None
        if pair and isinstance(pair[1], ScalarNode) and _loaded(pair[1]) == empty:
            found.append(key)
    return tuple(found)


def _loaded(node: ScalarNode) -> object:
    if node.tag.endswith(":bool"):
        return node.value.lower() == "true"
    return node.value


def _api_version_edit(lines: Lines, root: MappingNode, source: str, target: str) -> Edit:
    value = entry(root, "apiVersion")[1]
    written = lines.text[value.start_mark.index:value.end_mark.index]
    new = written.replace(f"{facts.GROUP}/{source}", f"{facts.GROUP}/{target}", 1)
    return Edit(value.start_mark.index, value.end_mark.index, new)


def _objects(roots: list[Node]) -> Iterator[tuple[int, int | None, Node]]:
    """(document index, item index, node) of every object: each document, and each item of a ``kind: List``
    (what ``kubectl get -o yaml`` writes)."""
    for index, root in enumerate(roots):
        if isinstance(root, MappingNode) and _scalar(child(root, "kind")) == "List":
            for item, node in enumerate(_items(child(root, "items"))):
                yield index, item, node
        else:
            yield index, None, root


def _object_at(roots: list[Node], index: int, item: int | None) -> Node:
    return roots[index] if item is None else _items(child(roots[index], "items"))[item]


def _first_round(lines: Lines, index: int, item: int | None, root: Node,
                 target: str) -> tuple[DocumentChange | None, list[Edit]]:
    """The document's change and edits: apiVersion, requests nested, devices unwrapped."""
    if not isinstance(root, MappingNode):
        return None, []
    version = facts.parse_api_version(_scalar(child(root, "apiVersion")))
    kind = _scalar(child(root, "kind"))
    if version is None or version == target:
        return None, []
    change = DocumentChange(index, item, kind or "?", _scalar(child(root, "metadata", "name")) or "?", version, target)
    if kind not in facts.KINDS:
        change.note = f"left as it is: convert rewrites {', '.join(facts.KINDS)}"
        return change, []
    if version not in facts.SOURCES:
        change.note = (f"left as it is: convert rewrites {' and '.join(f'{facts.GROUP}/{v}' for v in facts.SOURCES)}, "
                       f"not {facts.GROUP}/{version}")
        return change, []
    edits = [_api_version_edit(lines, root, version, target)]
    change.changes.append(f"apiVersion {facts.GROUP}/{version} -> {facts.GROUP}/{target}")
    if version == "v1beta1":
        if kind in facts.CLAIM_SPEC_PATH:
            edits += _nest_requests(lines, child(root, *facts.CLAIM_SPEC_PATH[kind]), _step(root), change)
        elif kind == "ResourceSlice":
            edits += _unwrap_devices(lines, child(root, "spec"), change)
    return change, edits


class _AliasInPlace(Composer):
    """A composer whose alias (``*name``) is a node where the alias is written, not its anchor's node: edits need
    the places in the text (what an alias names is converted where its anchor is)."""

    def compose_node(self, parent, index):
        if self.parser.check_event(AliasEvent):
            event = self.parser.peek_event()
            super().compose_node(parent, index)  # consumes the event; refuses an unknown alias
            return ScalarNode("tag:yaml.org,2002:str", f"*{event.anchor}", event.start_mark, event.end_mark)
        return super().compose_node(parent, index)


def _compose(text: str, source: str) -> list[Node]:
    yaml = YAML(typ="rt")
    yaml.Composer = _AliasInPlace
    try:
        return list(yaml.compose_all(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}:{mark.column + 1}" if mark else ""
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise ConvertInputNotYaml(f"{source}{where}: not YAML: {problem}") from None
    except YAMLError as exc:
        raise ConvertInputNotYaml(f"{source}: not YAML: {exc}") from None


def convert_text(text: str, source: str = "<text>", target: str = "v1") -> tuple[str, list[DocumentChange]]:
    """``text`` with every v1beta1/v1beta2 DRA document rewritten to ``target`` as the API server converts it,
    every other character as it was; and what changed in each document (or why one was left as it was)."""
    roots = _compose(text, source)
    lines = Lines(text)
    changes, edits, slices = [], [], []
    for index, item, root in _objects(roots):
        change, found = _first_round(lines, index, item, root, target)
        if change is None:
            continue
        changes.append(change)
        edits += found
        if change.kind == "ResourceSlice" and change.source_version == "v1beta1" and found:
            slices.append(change)
    new_text = apply(text, edits)
    if slices:  # the slice's spec may hold the devices just unwrapped: its own fields are dropped from the new text
        new_text = _drop_empty_slice_fields(new_text, source, slices)
    return new_text, changes


def _drop_empty_slice_fields(text: str, source: str, slices: list[DocumentChange]) -> str:
    roots = _compose(text, source)
    lines = Lines(text)
    edits = []
    for change in slices:
        spec = child(_object_at(roots, change.index, change.item), "spec")
        empty = _empty_slice_fields(spec)
        if empty:
            edits.append(drop(lines, spec, empty))
            change.changes.append(f"spec: {', '.join(empty)} dropped (empty: v1 leaves it unset)")
    return apply(text, edits) if edits else text
