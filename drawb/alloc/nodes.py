"""Node selection as the scheduler evaluates it (``nodeaffinity.NewNodeSelector``), and the
node selector written into an allocation result (``createNodeSelector``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

NodeSelector = Mapping[str, Any]


class NodeSelectorError(ValueError):
    """A node selector that nodeaffinity cannot parse."""


def _int64(text: str) -> int | None:
    try:
        value = int(text, 10)
    except (TypeError, ValueError):
        return None
    return value if -(2**63) <= value < 2**63 else None


def _label_matcher(req: Mapping[str, Any]):
    key, op, values = req.get("key", ""), req.get("operator", ""), list(req.get("values") or [])
    if op in ("In", "NotIn"):
        if not values:
            raise NodeSelectorError(f"{key}: for 'in', 'notin' operators, values set can't be empty")
        wanted = frozenset(values)
        if op == "In":
            return lambda labels: key in labels and labels[key] in wanted
        return lambda labels: key not in labels or labels[key] not in wanted
    if op in ("Exists", "DoesNotExist"):
        if values:
            raise NodeSelectorError(f"{key}: values set must be empty for exists and does not exist")
        if op == "Exists":
            return lambda labels: key in labels
        return lambda labels: key not in labels
    if op in ("Gt", "Lt"):
        if len(values) != 1 or _int64(values[0]) is None:
            raise NodeSelectorError(f"{key}: for 'Gt', 'Lt' operators, exactly one integer value is required")
        bound = _int64(values[0])

        def compare(labels: Mapping[str, str]) -> bool:
            have = _int64(labels[key]) if key in labels else None
            if have is None:
                return False
            return have > bound if op == "Gt" else have < bound

        return compare
    raise NodeSelectorError(f"{op!r} is not a valid label selector operator")


def _field_matcher(req: Mapping[str, Any]):
    key, op, values = req.get("key", ""), req.get("operator", ""), list(req.get("values") or [])
    if key != "metadata.name":
        raise NodeSelectorError(f"{key!r} is not a valid field selector key")
    if op not in ("In", "NotIn"):
        raise NodeSelectorError(f"{op!r} is not a valid field selector operator")
    if len(values) != 1:
        raise NodeSelectorError(f"unexpected number of value ({len(values)}) for node field selector operator {op!r}")
    value = values[0]
    if op == "In":
        return lambda name: name == value
    return lambda name: name != value


def compile_node_selector(selector: NodeSelector):
    """A predicate over Node objects; NodeSelectorError when a term cannot be parsed."""
    terms = []
    errors = []
    for term in selector.get("nodeSelectorTerms") or []:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue  # an empty term matches no objects
        try:
            terms.append(([_label_matcher(r) for r in exprs], [_field_matcher(r) for r in fields]))
        except NodeSelectorError as err:
            errors.append(str(err))
    if errors:
        raise NodeSelectorError(", ".join(errors))

    def match(node: Mapping[str, Any] | None) -> bool:
        if node is None:
            return False
        metadata = node.get("metadata") or {}
        labels, name = metadata.get("labels") or {}, metadata.get("name", "")
        for label_reqs, field_reqs in terms:
            if all(m(labels) for m in label_reqs) and all(m(name) for m in field_reqs):
                return True
        return False

    return match


def node_matches(node: Mapping[str, Any] | None, node_name: str, all_nodes: bool, selector: NodeSelector | None) -> bool:
    """Whether a slice (or device) with this node selection is available on ``node``."""
    if node_name:
        return node is not None and (node.get("metadata") or {}).get("name") == node_name
    if all_nodes:
        return True
    if selector is not None:
        return compile_node_selector(selector)(node)
    return False


def node_name_selector(node_name: str) -> dict[str, Any]:
    """``matchFields metadata.name In [node]``: the selector of a node-local allocation."""
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def _contains(requirements: Sequence[Mapping[str, Any]], requirement: Mapping[str, Any]) -> bool:
    values = set(requirement.get("values") or [])
    return any(
        r.get("key") == requirement.get("key")
        and r.get("operator") == requirement.get("operator")
        and set(r.get("values") or []) == values
        for r in requirements
    )


def merge_requirements(into: list, requirements: Sequence[Mapping[str, Any]]) -> None:
    """Append each requirement not already present (same key, operator and set of values)."""
    for requirement in requirements:
        if not _contains(into, requirement):
            into.append(dict(requirement))
