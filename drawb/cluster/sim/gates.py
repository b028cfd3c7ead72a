"""What the simulated API server does with feature-gated DRA fields, as kube-apiserver 1.34 does.

Mirrors ``dropDisabledFields`` of ``pkg/registry/resource/*/strategy.go``: while a gate is off, its
fields are removed from a new object, unless the stored object already used them (an update keeps
what was there). The server validates what is left (``validate.check_rules``): a request left with
neither ``exactly`` nor ``firstAvailable`` is refused, and so is ``adminAccess`` kept in a namespace
without the admin-access label.
"""

from __future__ import annotations


def _on(gates: dict[str, bool], *names: str) -> bool:
    return all(gates.get(n, False) for n in names)


def _devices_spec(obj: dict) -> dict:
    """``spec.devices`` of a claim, or ``spec.spec.devices`` of a claim template."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "ResourceClaimTemplate":
        spec = spec.get("spec") or {}
    return spec.get("devices") or {}


def _requests(obj: dict | None) -> list[dict]:
    return _devices_spec(obj or {}).get("requests") or []


def _slice_devices(obj: dict | None) -> list[dict]:
    return ((obj or {}).get("spec") or {}).get("devices") or []


def _uses(obj: dict | None, found) -> bool:
    return obj is not None and bool(found(obj))


def _pop_all(items: list[dict], *fields: str) -> None:
    for item in items:
        for f in fields:
            item.pop(f, None)


def _drop_class(new: dict, old: dict | None, gates: dict[str, bool]) -> None:
    in_use = _uses(old, lambda o: "extendedResourceName" in (o.get("spec") or {}))
    if not gates.get("DRAExtendedResource") and not in_use:
        (new.get("spec") or {}).pop("extendedResourceName", None)


_PARTITION_DEVICE_FIELDS = ("consumesCounters", "nodeName", "nodeSelector", "allNodes")
_BINDING_FIELDS = ("bindingConditions", "bindingFailureConditions", "bindsToNode")


def _drop_slice(new: dict, old: dict | None, gates: dict[str, bool]) -> None:
    spec, devices = new.get("spec") or {}, _slice_devices(new)
    dropped: set[str] = set()  # device fields to remove
    if not gates.get("DRADeviceTaints") and not _uses(old, lambda o: any(d.get("taints") for d in _slice_devices(o))):
        dropped.add("taints")
    partition_in_use = _uses(old, lambda o: (o["spec"].get("sharedCounters") or "perDeviceNodeSelection" in o["spec"]
                                             or any(f in d for d in _slice_devices(o) for f in _PARTITION_DEVICE_FIELDS)))
    if not gates.get("DRAPartitionableDevices") and not partition_in_use:
        spec.pop("sharedCounters", None)
        spec.pop("perDeviceNodeSelection", None)
        dropped.update(_PARTITION_DEVICE_FIELDS)
    binding_in_use = _uses(old, lambda o: any(d.get(f) for d in _slice_devices(o) for f in _BINDING_FIELDS))
    if not _on(gates, "DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus") and not binding_in_use:
        dropped.update(_BINDING_FIELDS)
    capacity_in_use = _uses(old, lambda o: any("allowMultipleAllocations" in d or any(
        "requestPolicy" in c for c in (d.get("capacity") or {}).values()) for d in _slice_devices(o)))
    drop_policy = not gates.get("DRAConsumableCapacity") and not capacity_in_use
    if drop_policy:
        dropped.add("allowMultipleAllocations")
    # one pass over the devices (a scenario seeds 100,000 of them): most have none of these fields
    for device in devices:
        for f in dropped.intersection(device):
            del device[f]
        if drop_policy:
            for capacity in (device.get("capacity") or {}).values():
                if "requestPolicy" in capacity:
                    del capacity["requestPolicy"]


def _drop_claim_spec(new: dict, old: dict | None, gates: dict[str, bool]) -> None:
    requests = _requests(new)
    if not gates.get("DRAPrioritizedList") and not _uses(old, lambda o: any(r.get("firstAvailable") for r in _requests(o))):
        _pop_all(requests, "firstAvailable")
    admin_in_use = _uses(old, lambda o: any("adminAccess" in (r.get("exactly") or {}) for r in _requests(o)))
    if not gates.get("DRAAdminAccess") and not admin_in_use:
        _pop_all([r["exactly"] for r in requests if r.get("exactly")], "adminAccess")
    capacity_in_use = _uses(old, lambda o: any(
        "capacity" in (r.get("exactly") or {}) or any("capacity" in s for s in r.get("firstAvailable") or [])
        for r in _requests(o)))
    if not gates.get("DRAConsumableCapacity") and not capacity_in_use:
        # Kubernetes 1.34 loops over copies of the constraints, so distinctAttribute is never dropped.
        _pop_all([r["exactly"] for r in requests if r.get("exactly")], "capacity")
        _pop_all([s for r in requests for s in r.get("firstAvailable") or []], "capacity")


def drop_disabled_fields(new: dict, old: dict | None, gates: dict[str, bool]) -> None:
    """Remove, in place, the fields of ``new`` whose gates are off (``old``: the stored object, if any)."""
    kind = new.get("kind")
    if kind == "DeviceClass":
        _drop_class(new, old, gates)
    elif kind == "ResourceSlice":
        _drop_slice(new, old, gates)
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        _drop_claim_spec(new, old, gates)
