"""What the simulated API server does with feature-gated DRA fields, as kube-apiserver of its minor does.

Mirrors ``dropDisabledFields`` of ``pkg/registry/resource/*/strategy.go`` (and, from 1.35 on,
``pkg/api/resourceclaimspec``): while a gate is off, its fields are removed from a new object, unless
the stored object already used them (an update keeps what was there). A field a minor does not have
never gets here: the schema check refuses it first. The server validates what is left
(``validate.check_rules``): a request left with neither ``exactly`` nor ``firstAvailable`` is refused,
and so is ``adminAccess`` kept in a namespace without the admin-access label.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from drawb.versions import Rules

_PARTITION_DEVICE_FIELDS = ("consumesCounters", "nodeName", "nodeSelector", "allNodes")
_BINDING_FIELDS = ("bindingConditions", "bindingFailureConditions", "bindsToNode")
_NODE_ALLOCATABLE_FIELDS = ("nodeAllocatableResourceMappings", "nodeAllocatableResources")  # 1.36's name, 1.37's
_LIST_VALUES = ("bools", "ints", "strings", "versions")  # DRAListTypeAttributes' attribute values


def _devices_spec(obj: dict) -> dict:
    """``spec.devices`` of a claim, or ``spec.spec.devices`` of a claim template."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    return spec.get("devices") or {}


def _requests(obj: dict | None) -> list[dict]:
    return _devices_spec(obj or {}).get("requests") or []


def _exact_and_sub_requests(obj: dict | None) -> list[dict]:
    """Every ``exactly`` and every ``firstAvailable`` entry of a claim's requests."""
    found = []
    for request in _requests(obj):
        if request.get("exactly"):
            found.append(request["exactly"])
        found.extend(request.get("firstAvailable") or [])
    return found


def _slice_devices(obj: dict | None) -> list[dict]:
    return ((obj or {}).get("spec") or {}).get("devices") or []


def _uses(obj: dict | None, found: Callable[[dict], object]) -> bool:
    return obj is not None and bool(found(obj))


def _pop_all(items: list[dict], *fields: str) -> None:
    for item in items:
        for f in fields:
            item.pop(f, None)


class GatedFields:
    """The fields one simulated API server (a minor, with its gates' values) drops from new objects."""

    def __init__(self, rules: Rules, gates: Mapping[str, bool]):
        self.gates = dict(gates)
        self.drops_distinct_attribute = rules.has("api.distinct_attribute_gated")
        self.drops_tolerations = rules.has("api.tolerations_gated")

    def _off(self, *names: str) -> bool:
        """Whether any of ``names`` is off (a gate the minor lacks counts as off)."""
        return not all(self.gates.get(n, False) for n in names)

    def drop(self, new: dict, old: dict | None = None) -> None:
        """Remove, in place, the fields of ``new`` whose gates are off (``old``: the stored object, if any)."""
        kind = new.get("kind")
        if kind == "DeviceClass":
            self._drop_class(new, old)
        elif kind == "ResourceSlice":
            self._drop_slice(new, old)
        elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
            self._drop_claim_spec(new, old)

    def _drop_class(self, new: dict, old: dict | None) -> None:
        in_use = _uses(old, lambda o: "extendedResourceName" in (o.get("spec") or {}))
        if self._off("DRAExtendedResource") and not in_use:
            (new.get("spec") or {}).pop("extendedResourceName", None)

    def _drop_slice(self, new: dict, old: dict | None) -> None:
        spec, devices = new.get("spec") or {}, _slice_devices(new)
        dropped: set[str] = set()  # device fields to remove
        if self._off("DRADeviceTaints") and not _uses(old, lambda o: any(d.get("taints") for d in _slice_devices(o))):
            dropped.add("taints")
        partition_in_use = _uses(old, lambda o: (
            o["spec"].get("sharedCounters") or "perDeviceNodeSelection" in o["spec"]
            or any(f in d for d in _slice_devices(o) for f in _PARTITION_DEVICE_FIELDS)))
        if self._off("DRAPartitionableDevices") and not partition_in_use:
            spec.pop("sharedCounters", None)
            spec.pop("perDeviceNodeSelection", None)
            dropped.update(_PARTITION_DEVICE_FIELDS)
        binding_in_use = _uses(old, lambda o: any(d.get(f) for d in _slice_devices(o) for f in _BINDING_FIELDS))
        if self._off("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus") and not binding_in_use:
            dropped.update(_BINDING_FIELDS)
        capacity_in_use = _uses(old, lambda o: any("allowMultipleAllocations" in d or any(
            "requestPolicy" in c for c in (d.get("capacity") or {}).values()) for d in _slice_devices(o)))
        drop_policy = self._off("DRAConsumableCapacity") and not capacity_in_use
        if drop_policy:
            dropped.add("allowMultipleAllocations")
        groups_in_use = _uses(old, lambda o: any(c.get("compatibilityGroups") for d in _slice_devices(o)
                                                 for c in d.get("consumesCounters") or []))
        drop_groups = self._off("DRADeviceCompatibilityGroups") and not groups_in_use
        allocatable_in_use = _uses(old, lambda o: any(d.get(f) for d in _slice_devices(o) for f in _NODE_ALLOCATABLE_FIELDS))
        if self._off("DRANodeAllocatableResources") and not allocatable_in_use:
            dropped.update(_NODE_ALLOCATABLE_FIELDS)
        lists_in_use = _uses(old, lambda o: any(f in a for d in _slice_devices(o)
                                                for a in (d.get("attributes") or {}).values() for f in _LIST_VALUES))
        drop_lists = self._off("DRAListTypeAttributes") and not lists_in_use
        if self._off("DRAPartitionableDevicesType") and not _uses(old, lambda o: "partitionTypeAttribute" in o["spec"]):
            spec.pop("partitionTypeAttribute", None)
        if self._off("DRAOptionalNodeOperations") and not _uses(old, lambda o: o["spec"].get("skipNodeOperations")):
            spec.pop("skipNodeOperations", None)
        # one pass over the devices (a scenario seeds 100,000 of them): most have none of these fields
        for device in devices:
            for f in dropped.intersection(device):
                del device[f]
            if drop_policy:
                for capacity in (device.get("capacity") or {}).values():
                    if "requestPolicy" in capacity:
                        del capacity["requestPolicy"]
            if drop_groups:
                _pop_all(device.get("consumesCounters") or [], "compatibilityGroups")
            if drop_lists:
                _pop_all(list((device.get("attributes") or {}).values()), *_LIST_VALUES)

    def _drop_claim_spec(self, new: dict, old: dict | None) -> None:
        requests = _requests(new)
        if self._off("DRAPrioritizedList") and not _uses(old, lambda o: any(r.get("firstAvailable") for r in _requests(o))):
            _pop_all(requests, "firstAvailable")
        tolerations_in_use = _uses(old, lambda o: any(r.get("tolerations") for r in _exact_and_sub_requests(o)))
        if self.drops_tolerations and self._off("DRADeviceTaints") and not tolerations_in_use:
            _pop_all(_exact_and_sub_requests(new), "tolerations")
        admin_in_use = _uses(old, lambda o: any("adminAccess" in (r.get("exactly") or {}) for r in _requests(o)))
        if self._off("DRAAdminAccess") and not admin_in_use:
            _pop_all([r["exactly"] for r in requests if r.get("exactly")], "adminAccess")
        capacity_in_use = _uses(old, lambda o: (
            any("distinctAttribute" in c for c in _devices_spec(o).get("constraints") or [])
            or any("capacity" in r for r in _exact_and_sub_requests(o))))
        if self._off("DRAConsumableCapacity") and not capacity_in_use:
            # Kubernetes 1.34 loops over copies of the constraints, so it never drops distinctAttribute.
            if self.drops_distinct_attribute:
                _pop_all(_devices_spec(new).get("constraints") or [], "distinctAttribute")
            _pop_all(_exact_and_sub_requests(new), "capacity")
        derived_in_use = _uses(old, lambda o: any(r.get("derivedAttributes") for r in _exact_and_sub_requests(o)))
        if self._off("DRADerivedAttributes") and not derived_in_use:
            _pop_all(_exact_and_sub_requests(new), "derivedAttributes")
