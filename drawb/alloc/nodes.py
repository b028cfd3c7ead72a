"""Where a slice or device is available (``node_matches``, selectors parsed by
``drawb.api.nodeaffinity``), and the node selector written into an allocation result
(``createNodeSelector``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drawb.api.nodeaffinity import compile_node_selector

NodeSelector = Mapping[str, Any]


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
