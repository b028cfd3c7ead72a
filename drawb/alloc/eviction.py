"""Which pods NoExecute device taints evict, and when, as kube-controller-manager's device taint
eviction controller decides (``pkg/controller/devicetainteviction``).

A pod is evicted when it is bound to a node and one of its claims, allocated and reserved for it, has
a device with a NoExecute taint its allocation result does not tolerate for ever: a NoExecute
toleration without ``tolerationSeconds`` keeps it; with ``tolerationSeconds`` (the smallest of those that
match, negative counting as 0) it is evicted that long after the taint's ``timeAdded``; without one at
once. Taints of other effects evict nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from drawb.api.nodeaffinity import tolerates

DeviceID = tuple[str, str, str]
Obj = Mapping[str, Any]


@dataclass(frozen=True)
class ClaimEviction:
    """An allocated claim a NoExecute taint reaches: the earliest taint and the delay after its timeAdded."""

    claim: Obj
    device: DeviceID
    taint: Mapping[str, Any]
    delay: float  # seconds after the taint's timeAdded (0: at once)


def taint_delay(taint: Mapping[str, Any], tolerations: Iterable[Mapping[str, Any]]) -> float | None:
    """Seconds after ``timeAdded`` that a NoExecute ``taint`` evicts despite ``tolerations`` (an allocation
    result's); None: it never does (not NoExecute, or tolerated without a limit)."""
    if taint.get("effect") != "NoExecute":
        return None
    limit: float | None = None
    for toleration in tolerations:
        if toleration.get("effect") != "NoExecute" or not tolerates(toleration, taint):
            continue
        seconds = toleration.get("tolerationSeconds")
        if seconds is None:
            return None
        limit = max(int(seconds), 0) if limit is None else min(limit, max(int(seconds), 0))
    return 0.0 if limit is None else float(limit)


def claim_eviction(claim: Obj, taints_of: Callable[[DeviceID], Iterable[Mapping[str, Any]]],
                   added_at: Callable[[Mapping[str, Any]], float]) -> ClaimEviction | None:
    """The earliest eviction a claim's allocated devices cause (``added_at(taint)``: when the taint was
    added, in the caller's seconds), or None."""
    best: tuple[float, ClaimEviction] | None = None
    allocation = ((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}
    for result in allocation.get("results") or ():
        device = (result.get("driver", ""), result.get("pool", ""), result.get("device", ""))
        for taint in taints_of(device):
            delay = taint_delay(taint, result.get("tolerations") or ())
            if delay is None:
                continue
            when = added_at(taint) + delay
            if best is None or when < best[0]:
                best = (when, ClaimEviction(claim, device, taint, delay))
    return None if best is None else best[1]


def pods_of_claim(claim: Obj, pods_by_uid: Mapping[str, Obj]) -> list[Obj]:
    """The bound pods a claim is reserved for (the ones its eviction reaches)."""
    found = []
    for ref in (claim.get("status") or {}).get("reservedFor") or ():
        if ref.get("resource", "pods") != "pods":
            continue
        pod = pods_by_uid.get(ref.get("uid", ""))
        if pod is not None and (pod.get("spec") or {}).get("nodeName") and pod["metadata"].get("name") == ref.get("name"):
            found.append(pod)
    return found
