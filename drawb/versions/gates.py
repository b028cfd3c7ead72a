"""Every DRA feature gate of the Kubernetes minors drawb knows: stage, default and lock per minor,
the components that read it and the API fields it guards.

The histories are facts from ``pkg/features/kube_features.go`` of each release (the versioned specs
of ``k8s.io/kubernetes`` v1.34.4, v1.35.4, v1.36.3 and v1.37.2); a test compares them with those
files. A history lists, in order, the minor from which a spec holds and the spec.
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


_ALL = (APISERVER, SCHEDULER, CONTROLLER_MANAGER, KUBELET)

HISTORIES: dict[str, _History] = {
    # DRA itself: off, the whole resource.k8s.io API goes, not some of its fields
    "DynamicResourceAllocation": _History(_specs("26 alpha", "32 beta", "34 ga on", "35 ga on locked"), _ALL),
    "DRAAdminAccess": _History(
        _specs("32 alpha", "34 beta on", "36 ga on locked"), (APISERVER, SCHEDULER),
        ("ResourceClaim spec.devices.requests[].exactly.adminAccess", "allocation results[].adminAccess")),
    "DRAPrioritizedList": _History(
        _specs("33 alpha", "34 beta on", "36 ga on", "37 ga on locked"), (APISERVER, SCHEDULER),
        ("ResourceClaim spec.devices.requests[].firstAvailable",)),
    "DRAResourceClaimDeviceStatus": _History(
        _specs("32 alpha", "33 beta on", "37 ga on locked"), (APISERVER, SCHEDULER),
        ("ResourceClaim status.devices",)),
    "DRASchedulerFilterTimeout": _History(_specs("34 beta on"), (SCHEDULER,)),
    "DRADeviceTaints": _History(
        _specs("33 alpha", "36 beta on", "37 ga on"), (APISERVER, SCHEDULER, CONTROLLER_MANAGER),
        ("ResourceSlice spec.devices[].taints", "requests' tolerations")),
    "DRADeviceTaintRules": _History(
        _specs("35 alpha", "36 beta", "37 ga on"), (APISERVER, SCHEDULER, CONTROLLER_MANAGER),
        ("the DeviceTaintRule object",)),
    "DRAPartitionableDevices": _History(
        _specs("33 alpha", "36 beta on"), (APISERVER, SCHEDULER),
        ("ResourceSlice spec.sharedCounters", "spec.perDeviceNodeSelection",
         "spec.devices[].consumesCounters", "spec.devices[].nodeName/nodeSelector/allNodes")),
    "DRAConsumableCapacity": _History(
        _specs("34 alpha", "36 beta on"), (APISERVER, SCHEDULER),
        ("ResourceSlice spec.devices[].allowMultipleAllocations", "capacity[].requestPolicy",
         "requests' capacity", "constraints[].distinctAttribute")),
    "DRADeviceBindingConditions": _History(
        _specs("34 alpha", "36 beta on"), (APISERVER, SCHEDULER),
        ("ResourceSlice spec.devices[].bindsToNode/bindingConditions/bindingFailureConditions",)),
    "DRAExtendedResource": _History(
        _specs("34 alpha", "36 beta on", "37 ga on locked"), (APISERVER, SCHEDULER, CONTROLLER_MANAGER, KUBELET),
        ("DeviceClass spec.extendedResourceName", "Pod status.extendedResourceClaimStatus")),
    "DRAListTypeAttributes": _History(
        _specs("36 alpha"), (APISERVER, SCHEDULER),
        ("ResourceSlice attribute values ints/bools/strings/versions",)),
    "DRANodeAllocatableResources": _History(
        _specs("36 alpha"), (APISERVER, SCHEDULER, KUBELET),
        ("ResourceSlice spec.devices[].nodeAllocatableResourceMappings",)),
    # authorization of the resourceclaims/binding and resourceclaims/driver subresources, no field
    "DRAResourceClaimGranularStatusAuthorization": _History(_specs("36 beta on"), (APISERVER,)),
    "DRAResourcePoolStatus": _History(_specs("36 alpha"), (APISERVER,), ("the ResourcePoolStatusRequest object",)),
    "DRAWorkloadResourceClaims": _History(
        _specs("36 alpha", "37 beta"), (APISERVER, SCHEDULER, CONTROLLER_MANAGER), ("PodGroup spec.resourceClaims",)),
    "DRAFractionalCapacityRange": _History(_specs("37 beta on"), (SCHEDULER,)),
    "DRAOptionalNodeOperations": _History(
        _specs("37 alpha"), (APISERVER, SCHEDULER, KUBELET), ("ResourceSlice spec.skipNodeOperations",)),
    "DRADerivedAttributes": _History(_specs("37 alpha"), (APISERVER, SCHEDULER), ("requests' derivedAttributes",)),
    "DRADeviceCompatibilityGroups": _History(
        _specs("37 alpha"), (APISERVER, SCHEDULER), ("ResourceSlice spec.devices[].consumesCounters[].compatibilityGroups",)),
    "DRAPartitionableDevicesType": _History(_specs("37 alpha"), (APISERVER,), ("ResourceSlice partitionTypeAttribute",)),
}  # fmt: skip


def gates_of(minor: int) -> dict[str, Gate]:
    """Every DRA gate that Kubernetes 1.<minor> has, as it stands there."""
    gates = {}
    for name, history in HISTORIES.items():
        holding = [spec for spec in history.specs if spec.since <= minor]
        if holding:
            spec = holding[-1]
            gates[name] = Gate(name, spec.stage, spec.default, spec.locked, history.components, history.fields)
    return gates
