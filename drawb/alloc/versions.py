"""Which allocator a scheduler runs: feature gate defaults per Kubernetes version, and the choice
between the stable, incubating and experimental implementations that
``k8s.io/dynamic-resource-allocation/structured`` makes from the enabled features.

Gate defaults are kube_features.go's versioned specs (kubernetes/kubernetes pkg/features); the
scheduler's mapping from gates to allocator features is the DynamicResources plugin's
(``DeviceStatus`` in 1.34, ``DeviceBindingAndStatus`` = binding conditions and device status from 1.35).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from drawb.alloc.errors import AllocationError

VERSIONS: Final = ("1.34", "1.35", "1.36", "1.37")

# gate -> default per minor version (34, 35, 36, 37); None: the gate does not exist yet.
_DEFAULTS: Final[dict[str, tuple[bool | None, ...]]] = {
    "DRAAdminAccess": (True, True, True, True),
    "DRAPrioritizedList": (True, True, True, True),
    "DRAResourceClaimDeviceStatus": (True, True, True, True),
    "DRADeviceTaints": (False, False, True, True),
    "DRAPartitionableDevices": (False, False, True, True),
    "DRAConsumableCapacity": (False, False, True, True),
    "DRADeviceBindingConditions": (False, False, True, True),
    "DRAListTypeAttributes": (None, None, False, False),
    "DRAFractionalCapacityRange": (None, None, None, True),
    "DRAOptionalNodeOperations": (None, None, None, False),
    "DRADerivedAttributes": (None, None, None, False),
    "DRADeviceCompatibilityGroups": (None, None, None, False),
}

# DRA gates that exist but do not change the allocator (first minor version that has them).
_OTHER_DRA_GATES: Final = {
    "DynamicResourceAllocation": 34, "DRAExtendedResource": 34, "DRASchedulerFilterTimeout": 34,
    "DRADeviceTaintRules": 35, "DRAWorkloadResourceClaims": 36, "DRANodeAllocatableResources": 36,
}  # fmt: skip

# allocator feature -> the gates that must all be on
_FEATURE_GATES: Final[dict[str, tuple[str, ...]]] = {
    "AdminAccess": ("DRAAdminAccess",),
    "PrioritizedList": ("DRAPrioritizedList",),
    "PartitionableDevices": ("DRAPartitionableDevices",),
    "DeviceTaints": ("DRADeviceTaints",),
    "ConsumableCapacity": ("DRAConsumableCapacity",),
    "ListTypeAttributes": ("DRAListTypeAttributes",),
    "FractionalCapacityRange": ("DRAFractionalCapacityRange",),
    "OptionalNodeOperations": ("DRAOptionalNodeOperations",),
    "DerivedAttributes": ("DRADerivedAttributes",),
    "CompatibilityGroups": ("DRADeviceCompatibilityGroups",),
}
_SINCE_37 = ("FractionalCapacityRange", "OptionalNodeOperations", "DerivedAttributes", "CompatibilityGroups")

_BASIC: Final = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
_BINDING_34: Final = frozenset({"DeviceBinding", "DeviceStatus", "ConsumableCapacity"})
_BINDING: Final = frozenset({"DeviceBindingAndStatus", "ConsumableCapacity"})

# The features each implementation supports, per minor version (most stable first).
_SUPPORTED: Final[dict[int, tuple[tuple[str, frozenset[str]], ...]]] = {
    34: (("stable", frozenset()), ("incubating", _BASIC), ("experimental", _BASIC | _BINDING_34)),
    35: (("stable", frozenset()), ("incubating", _BASIC), ("experimental", _BASIC | _BINDING)),
    36: (("stable", _BASIC), ("incubating", _BASIC | _BINDING),
         ("experimental", _BASIC | _BINDING | {"ListTypeAttributes"})),
    37: (("stable", _BASIC), ("incubating", _BASIC | _BINDING | {"FractionalCapacityRange"}),
         ("experimental", _BASIC | _BINDING | {"ListTypeAttributes", *_SINCE_37})),
}  # fmt: skip


@dataclass(frozen=True)
class Flavor:
    """One run of the allocator: the version, its implementation and the enabled features."""

    minor: int
    impl: str  # "stable", "incubating" or "experimental"
    features: frozenset[str]
    gates: tuple[tuple[str, bool], ...]

    def has(self, feature: str) -> bool:
        """Whether an allocator feature is enabled."""
        return feature in self.features

    @property
    def binding(self) -> bool:
        """Devices with binding conditions may be allocated (both binding gates on)."""
        if self.minor == 34:
            return "DeviceBinding" in self.features and "DeviceStatus" in self.features
        return "DeviceBindingAndStatus" in self.features


def minor_of(kubernetes_version: str) -> int:
    """34 for "1.34" or "v1.34.4"; AllocationError for versions drawb does not model."""
    text = str(kubernetes_version).lstrip("v")
    parts = text.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise AllocationError(f"kubernetes_version {kubernetes_version!r}: expected a version like '1.34'") from None
    if major != 1 or f"1.{minor}" not in VERSIONS:
        raise AllocationError(
            f"kubernetes_version {kubernetes_version!r}: the allocator is modelled for {', '.join(VERSIONS)}"
        )
    return minor


def gate_values(minor: int, feature_gates: Mapping[str, bool] | None) -> dict[str, bool]:
    """Every DRA gate the allocator reads, with the version's default where not named.

    Gates outside DRA are ignored; a DRA gate this version does not have is an AllocationError
    (the scheduler would not start with it)."""
    values = {gate: bool(defaults[minor - 34]) for gate, defaults in _DEFAULTS.items() if defaults[minor - 34] is not None}
    for gate, value in (feature_gates or {}).items():
        if gate in values:
            values[gate] = bool(value)
        elif gate.startswith("DRA") and _OTHER_DRA_GATES.get(gate, 99) > minor:
            known = sorted([*values, *(g for g, since in _OTHER_DRA_GATES.items() if since <= minor)])
            raise AllocationError(
                f"feature gate {gate!r} does not exist in Kubernetes 1.{minor}; its DRA gates are {', '.join(known)}"
            )
    return values


def allocator_features(minor: int, gates: Mapping[str, bool]) -> frozenset[str]:
    """The scheduler's ``structured.Features`` for these gate values."""
    on = {feature for feature, needs in _FEATURE_GATES.items() if all(gates.get(g, False) for g in needs)}
    if minor < 36:
        on.discard("ListTypeAttributes")
    if minor < 37:
        on.difference_update(_SINCE_37)
    if minor == 34:
        if gates["DRADeviceBindingConditions"]:
            on.add("DeviceBinding")
        if gates["DRAResourceClaimDeviceStatus"]:
            on.add("DeviceStatus")
    elif gates["DRADeviceBindingConditions"] and gates["DRAResourceClaimDeviceStatus"]:
        on.add("DeviceBindingAndStatus")
    return frozenset(on)


def choose(minor: int, features: frozenset[str]) -> str:
    """The most stable implementation that supports every enabled feature (``NewAllocator``)."""
    for impl, supported in _SUPPORTED[minor]:
        if features <= supported:
            return impl
    raise AllocationError(f"internal error: no allocator available for feature set {sorted(features)}")


def flavor(kubernetes_version: str, feature_gates: Mapping[str, bool] | None, impl: str | None = None) -> Flavor:
    """The allocator the scheduler of this version runs with these gates (``impl`` forces one, for tests)."""
    return _flavor(str(kubernetes_version), tuple(sorted((feature_gates or {}).items())), impl)


@lru_cache(maxsize=256)
def _flavor(kubernetes_version: str, feature_gates: tuple[tuple[str, bool], ...], impl: str | None) -> Flavor:
    minor = minor_of(kubernetes_version)
    gates = gate_values(minor, dict(feature_gates))
    features = allocator_features(minor, gates)
    return Flavor(minor, impl or choose(minor, features), features, tuple(sorted(gates.items())))
