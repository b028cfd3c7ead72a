"""Every DRA feature gate of the Kubernetes minors drawb knows: stage, default and lock per minor,
the components that read it and the API fields it guards.

The histories are facts from ``pkg/features/kube_features.go`` of each release (the versioned specs
of ``k8s.io/kubernetes`` v1.34.4, v1.35.4, v1.36.3 and v1.37.2, and from 1.35 on the gates each one
depends on); a test compares them with those files. A history lists, in order, the minor from which a
spec holds and the spec. ``OTHER_HISTORIES`` holds the gates outside DRA that a DRA gate depends on.
"""

from __future__ import annotations

from dataclasses import dataclass

APISERVER, SCHEDULER, CONTROLLER_MANAGER, KUBELET = (
    "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubelet")


@dataclass(frozen=True)
class Gate:
    """One gate as it stands in one minor."""

    name: str
    stage: str  # "alpha", "beta", "ga" or "deprecated"
    default: bool
    locked: bool  # LockToDefault: the gate cannot be set to anything but its default
    components: tuple[str, ...]  # the components that read it
    fields: tuple[str, ...]  # what the API server drops from new objects while it is off
    needs: tuple[str, ...] = ()  # the gates that must be on while it is on (components refuse to start otherwise)


@dataclass(frozen=True)
class _Spec:
    since: int
    stage: str
    default: bool
    locked: bool = False


def _specs(*entries: str) -> tuple[_Spec, ...]:
    """``"34 beta on"``, ``"36 ga on locked"``, ``"33 alpha"`` -> specs (off unless ``on``)."""
    specs = []
    for entry in entries:
        since, stage, *flags = entry.split()
        specs.append(_Spec(int(since), stage, "on" in flags, "locked" in flags))
    return tuple(specs)


@dataclass(frozen=True)
class _History:
    specs: tuple[_Spec, ...]
    components: tuple[str, ...]
    fields: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()


# Kubernetes checks feature gate dependencies from 1.35 on (component-base's AddDependencies); 1.34 has none.
DEPENDENCIES_SINCE = 35
_DRA = ("DynamicResourceAllocation",)

_ALL = (APISERVER, SCHEDULER, CONTROLLER_MANAGER, KUBELET)

HISTORIES: dict[str, _History] = {
    # DRA itself: off, the whole resource.k8s.io API goes, not some of its fields
    "DynamicResourceAllocation": _History(_specs("26 alpha", "32 beta", "34 ga on", "35 ga on locked"), _ALL),
    "DRAAdminAccess": _History(
        _specs("32 alpha", "34 beta on", "36 ga on locked"), (APISERVER, SCHEDULER),
        ("ResourceClaim spec.devices.requests[].exactly.adminAccess", "allocation results[].adminAccess"), needs=_DRA),
    "DRAPrioritizedList": _History(
        _specs("33 alpha", "34 beta on", "36 ga on", "37 ga on locked"), (APISERVER, SCHEDULER),
        ("ResourceClaim spec.devices.requests[].firstAvailable",), needs=_DRA),
    "DRAResourceClaimDeviceStatus": _History(
        _specs("32 alpha", "33 beta on", "37 ga on locked"), (APISERVER, SCHEDULER),
        ("ResourceClaim status.devices",)),
    "DRASchedulerFilterTimeout": _History(_specs("34 beta on"), (SCHEDULER,), needs=_DRA),
    "DRADeviceTaints": _History(
        _specs("33 alpha", "36 beta on", "37 ga on"), (APISERVER, SCHEDULER, CONTROLLER_MANAGER),
        ("ResourceSlice spec.devices[].taints", "requests' tolerations"), needs=_DRA),
    "DRADeviceTaintRules": _History(
        _specs("35 alpha", "36 beta", "37 ga on"), (APISERVER, SCHEDULER, CONTROLLER_MANAGER),
        ("the DeviceTaintRule object",), needs=("DRADeviceTaints",)),
    "DRAPartitionableDevices": _History(
        _specs("33 alpha", "36 beta on"), (APISERVER, SCHEDULER),
        ("ResourceSlice spec.sharedCounters", "spec.perDeviceNodeSelection",
         "spec.devices[].consumesCounters", "spec.devices[].nodeName/nodeSelector/allNodes"), needs=_DRA),
    "DRAConsumableCapacity": _History(
        _specs("34 alpha", "36 beta on"), (APISERVER, SCHEDULER),
        ("ResourceSlice spec.devices[].allowMultipleAllocations", "capacity[].requestPolicy",
         "requests' capacity", "constraints[].distinctAttribute"), needs=_DRA),
    "DRADeviceBindingConditions": _History(
        _specs("34 alpha", "36 beta on"), (APISERVER, SCHEDULER),
        ("ResourceSlice spec.devices[].bindsToNode/bindingConditions/bindingFailureConditions",),
        needs=(*_DRA, "DRAResourceClaimDeviceStatus")),
    "DRAExtendedResource": _History(
        _specs("34 alpha", "36 beta on", "37 ga on locked"), (APISERVER, SCHEDULER, CONTROLLER_MANAGER, KUBELET),
        ("DeviceClass spec.extendedResourceName", "Pod status.extendedResourceClaimStatus"), needs=_DRA),
    "DRAListTypeAttributes": _History(
        _specs("36 alpha"), (APISERVER, SCHEDULER),
        ("ResourceSlice attribute values ints/bools/strings/versions",), needs=_DRA),
    "DRANodeAllocatableResources": _History(
        _specs("36 alpha"), (APISERVER, SCHEDULER, KUBELET),
        ("ResourceSlice spec.devices[].nodeAllocatableResourceMappings",), needs=_DRA),
    # authorization of the resourceclaims/binding and resourceclaims/driver subresources, no field
    "DRAResourceClaimGranularStatusAuthorization": _History(
        _specs("36 beta on"), (APISERVER,), needs=(*_DRA, "DRAResourceClaimDeviceStatus")),
    "DRAResourcePoolStatus": _History(
        _specs("36 alpha"), (APISERVER,), ("the ResourcePoolStatusRequest object",), needs=_DRA),
    "DRAWorkloadResourceClaims": _History(
        _specs("36 alpha", "37 beta"), (APISERVER, SCHEDULER, CONTROLLER_MANAGER), ("PodGroup spec.resourceClaims",),
        needs=(*_DRA, "GenericWorkload")),
    "DRAFractionalCapacityRange": _History(_specs("37 beta on"), (SCHEDULER,), needs=("DRAConsumableCapacity",)),
    "DRAOptionalNodeOperations": _History(
        _specs("37 alpha"), (APISERVER, SCHEDULER, KUBELET), ("ResourceSlice spec.skipNodeOperations",),
        needs=(*_DRA, "NodeDeclaredFeatures")),
    "DRADerivedAttributes": _History(
        _specs("37 alpha"), (APISERVER, SCHEDULER), ("requests' derivedAttributes",), needs=_DRA),
    "DRADeviceCompatibilityGroups": _History(
        _specs("37 alpha"), (APISERVER, SCHEDULER),
        ("ResourceSlice spec.devices[].consumesCounters[].compatibilityGroups",),
        needs=(*_DRA, "DRAPartitionableDevices")),
    "DRAPartitionableDevicesType": _History(
        _specs("37 alpha"), (APISERVER,), ("ResourceSlice partitionTypeAttribute",),
        needs=(*_DRA, "DRAPartitionableDevices", "DRAResourcePoolStatus")),
}  # fmt: skip

# Gates outside DRA that a DRA gate depends on (components and fields are not modelled for them).
OTHER_HISTORIES: dict[str, _History] = {
    "GenericWorkload": _History(_specs("35 alpha", "37 beta"), ()),
    "NodeDeclaredFeatures": _History(_specs("35 alpha", "36 beta on", "37 ga on locked"), ()),
}


def gates_of(minor: int, histories: dict[str, _History] = HISTORIES) -> dict[str, Gate]:
    """Every gate of ``histories`` (default: the DRA gates) that Kubernetes 1.<minor> has, as it stands there."""
    gates = {}
    for name, history in histories.items():
        holding = [spec for spec in history.specs if spec.since <= minor]
        if holding:
            spec = holding[-1]
            needs = history.needs if minor >= DEPENDENCIES_SINCE else ()
            gates[name] = Gate(name, spec.stage, spec.default, spec.locked, history.components, history.fields, needs)
    return gates
