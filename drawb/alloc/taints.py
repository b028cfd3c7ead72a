"""Device taints and request tolerations (DRADeviceTaints), as ``resourceclaim.ToleratesTaint``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from drawb.api.nodeaffinity import tolerates

BLOCKING = frozenset({"NoSchedule", "NoExecute"})


def _untolerated(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]],
                 rules: Any) -> Iterator[Mapping[str, Any]]:  # fmt: skip
    for taint in taints:
        if not rules.taint_effects_all and (taint.get("effect") or "") not in BLOCKING:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            yield taint


def all_tolerated(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]], rules: Any) -> bool:
    """Whether every taint that blocks scheduling is tolerated (1.34: every taint, any effect)."""
    return next(_untolerated(taints, tolerations, rules), None) is None


def untolerated(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]],
                rules: Any) -> list[Mapping[str, Any]]:  # fmt: skip
    """The taints that block scheduling and no toleration tolerates, in order."""
    return list(_untolerated(taints, tolerations, rules))
