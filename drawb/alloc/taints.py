"""Device taints and request tolerations (DRADeviceTaints), as ``resourceclaim.ToleratesTaint``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

BLOCKING = frozenset({"NoSchedule", "NoExecute"})


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Whether one toleration tolerates one taint."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def all_tolerated(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]], rules: Any) -> bool:
    """Whether every taint that blocks scheduling is tolerated (1.34: every taint, any effect)."""
    for taint in taints:
        if not rules.taint_effects_all and (taint.get("effect") or "") not in BLOCKING:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return False
    return True
