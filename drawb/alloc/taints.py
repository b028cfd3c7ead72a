"""Device taints and request tolerations (DRADeviceTaints), as ``resourceclaim.ToleratesTaint``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from drawb.api.nodeaffinity import tolerates

BLOCKING = frozenset({"NoSchedule", "NoExecute"})


def blocks(taint: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]], rules: Any) -> bool:
    """Whether the taint blocks scheduling (1.34: every taint, any effect) and no toleration tolerates it."""
    if not rules.taint_effects_all and (taint.get("effect") or "") not in BLOCKING:
        return False
    return not any(tolerates(t, taint) for t in tolerations)


def all_tolerated(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]], rules: Any) -> bool:
    """Whether every taint that blocks scheduling is tolerated."""
    for taint in taints:
        if blocks(taint, tolerations, rules):
            return False
    return True


def untolerated(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]],
                rules: Any) -> list[Mapping[str, Any]]:  # fmt: skip
    """The taints that block scheduling and no toleration tolerates, in order."""
    return [t for t in taints if blocks(t, tolerations, rules)]
