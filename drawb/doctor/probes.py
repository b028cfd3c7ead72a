"""Feature-gate probes: a server-side dry-run create whose answer shows whether the gate is on.

While a DRA gate is off, kube-apiserver drops the gate's fields from a new object
(``dropDisabledFields`` in ``pkg/registry/resource/*/strategy.go``), so the dry-run's answer
tells: the field kept means on, the field gone means off. Nothing is stored.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from drawb.cluster.protocol import Cluster, ClusterError

PROBE_DRIVER = "doctor.drawb.dev"
PROBE_NODE = "drawb-doctor-probe"
ON, OFF, UNKNOWN = "on", "off", "unknown"


@dataclass(frozen=True)
class Outcome:
    """What one probe found: ``on``, ``off`` or ``unknown``, and how it knows."""

    state: str
    evidence: str


@dataclass(frozen=True)
class GateProbe:
    """How to ask the API server about one gate."""

    gate: str
    kind: str
    fields: str  # what the probe sends, in words
    spec: Callable[[], dict]
    kept: Callable[[dict], bool]
    others: str  # which other components need the gate too and why, or "" when only the API server does
    components: tuple[str, ...] = ()  # those components, for the --feature-gates fix
    error_means: tuple[tuple[str, str], ...] = ()  # (text in the API server's refusal, state it shows)

    def object(self, name: str, namespace: str) -> dict:
        """The probe object as it is sent."""
        meta: dict = {"name": name}
        if self.kind == "ResourceClaim":
            meta["namespace"] = namespace
        return {"apiVersion": "resource.k8s.io/v1", "kind": self.kind, "metadata": meta, "spec": self.spec()}

    def read(self, answer: dict | None, error: ClusterError | None) -> Outcome:
        """Interpret the dry-run's answer (the object as it would be stored) or its refusal."""
        if error is None:
            if self.kept(answer or {}):
                return Outcome(ON, f"a dry-run {self.kind} create kept {self.fields}")
            return Outcome(OFF, f"a dry-run {self.kind} create dropped {self.fields}")
        for text, state in self.error_means:
            if text in str(error):
                verb = "refused" if state == ON else "refused, as the field was dropped"
                return Outcome(state, f"a dry-run {self.kind} create with {self.fields} was {verb}: {error}")
        return Outcome(UNKNOWN, f"could not probe: the dry-run {self.kind} create failed: {error}")


def _slice(**device_or_spec) -> Callable[[], dict]:
    def spec() -> dict:
        base = {"driver": PROBE_DRIVER, "nodeName": PROBE_NODE,
                "pool": {"name": PROBE_NODE, "generation": 0, "resourceSliceCount": 1}}
        if "device" in device_or_spec:
            return {**base, "devices": [{"name": "probe", **device_or_spec["device"]}]}
        return {**base, **device_or_spec}
    return spec


def _device(answer: dict) -> dict:
    return ((answer.get("spec") or {}).get("devices") or [{}])[0]


def _request(answer: dict) -> dict:
    return (((answer.get("spec") or {}).get("devices") or {}).get("requests") or [{}])[0]


PROBES: tuple[GateProbe, ...] = (
    GateProbe(
        "DRAExtendedResource", "DeviceClass", "spec.extendedResourceName",
        lambda: {"selectors": [{"cel": {"expression": f"device.driver == '{PROBE_DRIVER}'"}}],
                 "extendedResourceName": f"{PROBE_DRIVER}/probe"},
        lambda a: "extendedResourceName" in (a.get("spec") or {}),
        "kube-scheduler (serves extended-resource requests such as nvidia.com/gpu through the class) and the kubelet",
        ("kube-scheduler", "kubelet"),
    ),
    GateProbe(
        "DRAPartitionableDevices", "ResourceSlice", "spec.sharedCounters",
        _slice(sharedCounters=[{"name": "probe", "counters": {"memory": {"value": "1Gi"}}}]),
        lambda a: bool((a.get("spec") or {}).get("sharedCounters")),
        "kube-scheduler (counts shared counters when it allocates)",
        ("kube-scheduler",),
    ),
    GateProbe(
        "DRAPrioritizedList", "ResourceClaim", "spec.devices.requests[].firstAvailable",
        lambda: {"devices": {"requests": [{"name": "probe", "firstAvailable": [
            {"name": "any", "deviceClassName": "gpu.nvidia.com"}]}]}},
        lambda a: "firstAvailable" in _request(a),
        "kube-scheduler (picks among the alternatives)",
        ("kube-scheduler",),
        (("exactly one of `exactly` or `firstAvailable` is required", OFF),),
    ),
    GateProbe(
        "DRAAdminAccess", "ResourceClaim", "spec.devices.requests[].exactly.adminAccess",
        lambda: {"devices": {"requests": [{"name": "probe", "exactly": {
            "deviceClassName": "gpu.nvidia.com", "adminAccess": True}}]}},
        lambda a: "adminAccess" in (_request(a).get("exactly") or {}),
        "kube-scheduler (allocates admin-access requests without reserving the device)",
        ("kube-scheduler",),
        (("admin access to devices requires", ON),),
    ),
    GateProbe(
        "DRADeviceTaints", "ResourceSlice", "spec.devices[].taints",
        _slice(device={"taints": [{"key": f"{PROBE_DRIVER}/probe", "effect": "NoSchedule"}]}),
        lambda a: bool(_device(a).get("taints")),
        "kube-scheduler (honours taints and tolerations) and kube-controller-manager (evicts on NoExecute)",
        ("kube-scheduler", "kube-controller-manager"),
    ),
    GateProbe(
        "DRAConsumableCapacity", "ResourceSlice", "spec.devices[].allowMultipleAllocations",
        _slice(device={"allowMultipleAllocations": True, "capacity": {"memory": {"value": "1Gi"}}}),
        lambda a: "allowMultipleAllocations" in _device(a),
        "kube-scheduler (shares one device among claims by capacity)",
        ("kube-scheduler",),
    ),
    GateProbe(
        "DRADeviceBindingConditions", "ResourceSlice",
        "spec.devices[].bindingConditions (kept only while DRAResourceClaimDeviceStatus is on too)",
        _slice(device={"bindsToNode": True, "bindingConditions": [f"{PROBE_DRIVER}/ready"],
                       "bindingFailureConditions": [f"{PROBE_DRIVER}/failed"]}),
        lambda a: bool(_device(a).get("bindingConditions")),
        "kube-scheduler (waits for the conditions before binding the pod)",
        ("kube-scheduler",),
    ),
)

# DRAResourceClaimDeviceStatus guards only ResourceClaim status.devices, and a create discards the
# status, so no dry-run create can show it; the binding-conditions probe implies it when kept.
DEVICE_STATUS_GATE = "DRAResourceClaimDeviceStatus"


def probe_name(gate: str) -> str:
    """A fresh name for one probe object (never stored: the create is a dry run)."""
    return f"drawb-doctor-{gate.lower()}-{secrets.token_hex(3)}"


def run_probe(cluster: Cluster, probe: GateProbe, namespace: str) -> Outcome:
    """Send one probe as a server-side dry run and read the answer."""
    obj = probe.object(probe_name(probe.gate), namespace)
    try:
        [answer] = cluster.apply([obj], dry_run=True)
    except ClusterError as exc:
        return probe.read(None, exc)
    return probe.read(answer, None)
