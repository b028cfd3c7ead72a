"""Which implementation of ``k8s.io/dynamic-resource-allocation/structured`` a scheduler runs:
the allocator features its gates enable (the DynamicResources plugin's mapping) and the most
stable implementation that supports them all (``NewAllocator``), per minor."""

from __future__ import annotations

from collections.abc import Mapping

# allocator feature -> the gate that must be on
FEATURE_GATES: dict[str, str] = {
    "AdminAccess": "DRAAdminAccess",
    "PrioritizedList": "DRAPrioritizedList",
    "PartitionableDevices": "DRAPartitionableDevices",
    "DeviceTaints": "DRADeviceTaints",
    "ConsumableCapacity": "DRAConsumableCapacity",
    "ListTypeAttributes": "DRAListTypeAttributes",
    "FractionalCapacityRange": "DRAFractionalCapacityRange",
    "OptionalNodeOperations": "DRAOptionalNodeOperations",
    "DerivedAttributes": "DRADerivedAttributes",
    "CompatibilityGroups": "DRADeviceCompatibilityGroups",
}

_BASIC = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})
_BINDING_34 = frozenset({"DeviceBinding", "DeviceStatus", "ConsumableCapacity"})
_BINDING = frozenset({"DeviceBindingAndStatus", "ConsumableCapacity"})
_NEW_IN_37 = frozenset({"FractionalCapacityRange", "OptionalNodeOperations", "DerivedAttributes", "CompatibilityGroups"})

# The features each implementation supports, per minor, most stable first.
IMPLEMENTATIONS: dict[int, tuple[tuple[str, frozenset[str]], ...]] = {
    34: (("stable", frozenset()), ("incubating", _BASIC), ("experimental", _BASIC | _BINDING_34)),
    35: (("stable", frozenset()), ("incubating", _BASIC), ("experimental", _BASIC | _BINDING)),
    36: (("stable", _BASIC), ("incubating", _BASIC | _BINDING),
         ("experimental", _BASIC | _BINDING | {"ListTypeAttributes"})),
    37: (("stable", _BASIC), ("incubating", _BASIC | _BINDING | {"FractionalCapacityRange"}),
         ("experimental", _BASIC | _BINDING | {"ListTypeAttributes"} | _NEW_IN_37)),
}  # fmt: skip

# Features whose code a minor's allocator does not have yet, whatever the gates say.
_ABSENT: dict[int, frozenset[str]] = {
    34: _NEW_IN_37 | {"ListTypeAttributes"},
    35: _NEW_IN_37 | {"ListTypeAttributes"},
    36: _NEW_IN_37,
    37: frozenset(),
}


def features(minor: int, gates: Mapping[str, bool]) -> frozenset[str]:
    """The scheduler's ``structured.Features`` for these gate values in 1.<minor>."""
    on = {feature for feature, gate in FEATURE_GATES.items() if gates.get(gate, False)} - _ABSENT[minor]
    binding, status = gates.get("DRADeviceBindingConditions", False), gates.get("DRAResourceClaimDeviceStatus", False)
    if minor == 34:  # 1.34 has two features where later minors have one
        on |= {"DeviceBinding"} if binding else set()
        on |= {"DeviceStatus"} if status else set()
    elif binding and status:
        on.add("DeviceBindingAndStatus")
    return frozenset(on)


def implementation(minor: int, enabled: frozenset[str]) -> str | None:
    """The most stable implementation of 1.<minor> that supports every enabled feature (None: none does)."""
    for name, supported in IMPLEMENTATIONS[minor]:
        if enabled <= supported:
            return name
    return None
