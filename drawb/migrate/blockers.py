"""Why a pod's claims fit on no node now, in the scheduler's terms: the filters that keep the pod off
every node with devices (a nodeSelector no node matches, a taint it does not tolerate, a cordon), the
claims that hold the devices it would get, or too few matching devices on any node it may use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from drawb.api.nodeaffinity import NODE_AFFINITY, node_filter

Allocate = Callable[[dict, list[dict]], bool]  # (node, claims held by others) -> whether the pod's claims fit


@dataclass(frozen=True)
class Blocker:
    """What keeps the claims from every node: in full, and in a few words for the recommendation."""

    text: str
    short: str


def _shown(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f", +{len(names) - 3} more" if len(names) > 3 else "")


def _selector_misses(pod: Mapping, nodes: list[dict]) -> list[str]:
    """``key=value`` of the pod's nodeSelector that no node has."""
    labels = [(n.get("metadata") or {}).get("labels") or {} for n in nodes]
    return [f"{key}={value}" for key, value in ((pod.get("spec") or {}).get("nodeSelector") or {}).items()
            if not any(node_labels.get(key) == value for node_labels in labels)]


def excluded(pod: Mapping, nodes: dict[str, dict], names: list[str]) -> Blocker:
    """Why the scheduler's filters admit ``pod`` to none of the nodes ``names`` (those with DRA devices)."""
    by_reason: dict[str, list[str]] = {}
    for name in names:
        reason = node_filter(pod, nodes[name]) if name in nodes else None
        by_reason.setdefault(reason or "admitted", []).append(name)
    parts = [f"{len(found)} {reason} ({_shown(found)})" for reason, found in by_reason.items()]
    misses = _selector_misses(pod, list(nodes.values())) if NODE_AFFINITY in by_reason else []
    detail = f"its nodeSelector {', '.join(misses)} matches no node" if misses else ""
    first = max(by_reason, key=lambda r: len(by_reason[r]))
    return Blocker(f"no node with DRA devices admits the pod{': ' + detail if detail else ''} ({'; '.join(parts)})",
                   detail or f"no node with DRA devices admits the pod: {first}")


def _holders(node: str, allocated: list[dict], pools: set[tuple[str, str]]) -> list[str]:
    """The claims (and their pods) holding devices of ``pools`` (the node's)."""
    found = []
    for claim in allocated:
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        if any((r.get("driver"), r.get("pool")) in pools for r in results):
            meta = claim["metadata"]
            pods = [r.get("name", "") for r in status.get("reservedFor") or [] if r.get("resource") == "pods"]
            found.append(f"{meta.get('namespace', '')}/{meta['name']}" + (f" (pod {', '.join(pods)})" if pods else ""))
    return found


def no_fit(pod: Mapping, nodes: dict[str, dict], admitted: list[str], others: list[str], allocated: list[dict],
           pools: Callable[[str], set[tuple[str, str]]], fits: Allocate) -> Blocker:
    """Why the claims fit on none of the ``admitted`` nodes: the devices are held (by which claims), or the
    nodes that would have them are ``others`` the pod may not use, or no node has enough of them."""
    free = [n for n in admitted if fits(nodes.get(n) or {"metadata": {"name": n}}, [])]
    if free:
        holders = _holders(free[0], allocated, pools(free[0]))
        held = f": on {free[0]} by claim(s) {_shown(holders)}" if holders else ""
        return Blocker(f"the devices are in use{held}; they would fit on {_shown(free)} once freed "
                       f"(0 of the {len(admitted)} nodes it may run on has them free now)",
                       f"the devices are held by claim(s) {_shown(holders)}" if holders else "the devices are in use")
    elsewhere = [n for n in others if fits(nodes.get(n) or {"metadata": {"name": n}}, allocated)]
    if elsewhere:
        node = nodes.get(elsewhere[0]) or {}
        reason = node_filter(pod, node) if node else None
        labels = (node.get("metadata") or {}).get("labels") or {}
        differ = [f"{k}={v} (the node has {labels.get(k, 'no such label')})"
                  for k, v in ((pod.get("spec") or {}).get("nodeSelector") or {}).items() if labels.get(k) != v]
        why = f"its nodeSelector {', '.join(differ)}" if reason == NODE_AFFINITY and differ else (reason or "its filters")
        return Blocker(f"they would fit on {_shown(elsewhere)}, which the pod may not use ({why}); none of the "
                       f"{len(admitted)} nodes it may run on ({_shown(admitted)}) has enough matching devices",
                       f"{why} keeps it off {_shown(elsewhere)}, the nodes with the devices")
    return Blocker(f"none of the {len(admitted)} nodes it may run on has enough matching devices, even with every "
                   "device free", "no node it may run on has that many matching devices")
