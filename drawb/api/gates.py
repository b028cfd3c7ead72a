"""The DRA feature gates whose fields the API server drops while they are off, and their defaults.

Stages and defaults follow ``pkg/features/kube_features.go`` of each Kubernetes release
(1.34.4 read directly; 1.35-1.37 from the release notes summarised in research/dra-v1-types.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from drawb.errors import DrawbError


class UnknownFeatureGate(DrawbError, ValueError):
    """A feature gate name drawb does not know."""


@dataclass(frozen=True)
class GateHistory:
    """When a gate became beta (on by default) and GA (locked on), as Kubernetes minor versions."""

    alpha: int
    beta: int | None = None
    ga: int | None = None

    def stage(self, minor: int) -> str:
        """``alpha``, ``beta`` or ``GA`` in Kubernetes 1.<minor> (``absent`` before it existed)."""
        if minor < self.alpha:
            return "absent"
        if self.ga is not None and minor >= self.ga:
            return "GA"
        if self.beta is not None and minor >= self.beta:
            return "beta"
        return "alpha"

    def default(self, minor: int) -> bool:
        """Whether the gate is on when nobody sets it (beta and GA DRA gates are on by default)."""
        return self.stage(minor) in ("beta", "GA")


DRA_GATES: dict[str, GateHistory] = {
    "DRAAdminAccess": GateHistory(alpha=32, beta=34, ga=36),
    "DRAPrioritizedList": GateHistory(alpha=33, beta=34, ga=36),
    "DRAResourceClaimDeviceStatus": GateHistory(alpha=32, beta=33, ga=37),
    "DRADeviceTaints": GateHistory(alpha=33, beta=36, ga=37),
    "DRAPartitionableDevices": GateHistory(alpha=33, beta=36),
    "DRAConsumableCapacity": GateHistory(alpha=34, beta=36),
    "DRADeviceBindingConditions": GateHistory(alpha=34, beta=36),
    "DRAExtendedResource": GateHistory(alpha=34, beta=36, ga=37),
}


def default_gates(minor: int) -> dict[str, bool]:
    """Every DRA gate's default in Kubernetes 1.<minor>."""
    return {name: history.default(minor) for name, history in DRA_GATES.items()}


def effective_gates(minor: int, overrides: dict[str, bool] | None = None) -> dict[str, bool]:
    """The defaults of 1.<minor> with ``overrides`` applied; unknown gate names raise UnknownFeatureGate."""
    unknown = sorted(set(overrides or {}) - set(DRA_GATES))
    if unknown:
        raise UnknownFeatureGate(f"unknown DRA feature gate(s) {', '.join(unknown)}; known: {', '.join(DRA_GATES)}")
    return {**default_gates(minor), **(overrides or {})}
