"""What replaces the legacy requests: one claim per container (shared where an init container can
reuse an app container's devices), its ResourceClaimTemplate, and the DeviceClass of the other road.

Pure: plain dicts in, plain dicts out.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from drawb.migrate.legacy import Device, LegacyRequest, Workload

RESOURCE_API = "resource.k8s.io/v1"
_LABEL_MAX = 63


@dataclass(frozen=True)
class ClaimPlan:
    """One claim of the rewritten pod: its entry in ``spec.resourceClaims``, template and requests."""

    entry: str  # spec.resourceClaims[].name, named by containers' resources.claims[].name
    template: str  # the ResourceClaimTemplate's name
    requests: tuple[tuple[Device, int], ...]
    containers: tuple[str, ...]  # the containers that name it
    pod: str = ""  # the pod template whose containers name it ("" for a kind with one)

    def device_count(self) -> int:
        """How many devices the claim asks for."""
        return sum(count for _, count in self.requests)


@dataclass(frozen=True)
class Plan:
    """The claims of one workload's pod, and what a reader should know about the change."""

    claims: tuple[ClaimPlan, ...]
    notes: tuple[str, ...]

    def entries_of(self, container: str, pod: str = "") -> list[str]:
        """The claim entries container ``container`` (of pod template ``pod``) names."""
        return [c.entry for c in self.claims if c.pod == pod and container in c.containers]

    def only(self, pod: str) -> Plan:
        """The claims of pod template ``pod`` alone."""
        return Plan(tuple(c for c in self.claims if c.pod == pod), self.notes)


def _label(text: str, limit: int = _LABEL_MAX) -> str:
    """``text`` cut to a DNS label of at most ``limit`` characters (a hash keeps cut names apart)."""
    clean = "".join(c if c.isalnum() or c == "-" else "-" for c in text.lower()).strip("-") or "x"
    if len(clean) <= limit:
        return clean
    digest = hashlib.sha256(clean.encode()).hexdigest()[:6]
    return f"{clean[: limit - 7].rstrip('-')}-{digest}"


def _asked(requests: list[LegacyRequest]) -> tuple[tuple[Device, int], ...]:
    return tuple((r.device, r.count) for r in requests)


def effective_devices(workload: Workload) -> dict[Device, int]:
    """What the scheduler counts for the legacy pod: per device, the larger of the biggest init container's
    request and the sum over app containers and sidecars (Kubernetes' effective pod request)."""
    apps: dict[Device, int] = {}
    inits: dict[Device, int] = {}
    for r in workload.requests:
        if r.role == "init":
            inits[r.device] = max(inits.get(r.device, 0), r.count)
        else:
            apps[r.device] = apps.get(r.device, 0) + r.count
    return {d: max(apps.get(d, 0), inits.get(d, 0)) for d in dict.fromkeys([*apps, *inits])}


def plan_claims(workload: Workload) -> Plan:
    """One claim per container with legacy requests; a plain init container whose request equals an app
    container's names that container's claim (it runs first, so the devices are the same ones). A kind with
    several pod templates (a PyTorchJob's Master and Worker) gets the claims of each, named after it."""
    claims, notes = [], []
    pods = workload.asking_pods()
    for pod in pods:
        owners, pod_notes = _owners([r for r in workload.requests if r.pod == pod])
        notes += [f"{pod}: {n}" if pod else n for n in pod_notes]
        for owner, names in owners.items():
            entry = "gpu" if len(owners) == 1 else _label(f"{owner}-gpu")
            parts = [workload.name, *([pod] if len(pods) > 1 else []), *([owner] if len(owners) > 1 else []), "gpu"]
            asked = _asked([r for r in workload.requests if r.pod == pod and r.container == owner])
            claims.append(ClaimPlan(entry, _label("-".join(parts), 253), asked, tuple(names), pod))
    return Plan(tuple(claims), tuple(notes))


def _owners(requests: list[LegacyRequest]) -> tuple[dict[str, list[str]], list[str]]:
    """Of one pod's requests: the container whose claim it is -> every container naming it; and the notes."""
    by_container: dict[str, list[LegacyRequest]] = {}
    for r in requests:
        by_container.setdefault(r.container, []).append(r)
    roles = {name: reqs[0].role for name, reqs in by_container.items()}
    owners: dict[str, list[str]] = {name: [name] for name in by_container if roles[name] != "init"}
    notes = []
    for name, reqs in by_container.items():
        if roles[name] != "init":
            continue
        same = next((o for o in owners if _asked(by_container[o]) == _asked(reqs)), None)
        if same is not None:
            owners[same].append(name)
            notes.append(f"init container '{name}' shares the claim of container '{same}' (it runs before it, "
                         "and the legacy pod reused the same devices)")
        else:
            owners[name] = [name]
            notes.append(f"init container '{name}' gets a claim of its own: its devices are held for the pod's "
                         "whole life, where the device plugin let the app containers reuse them")
    return owners, notes


def claim_spec(claim: ClaimPlan) -> dict:
    """The ResourceClaim spec asking for ``claim``'s devices, written as a person writes it."""
    requests = []
    for device, count in claim.requests:
        exactly: dict = {"deviceClassName": device.device_class}
        if count != 1:
            exactly["count"] = count
        if device.selector:
            exactly["selectors"] = [{"cel": {"expression": device.selector}}]
        requests.append({"name": device.request_name, "exactly": exactly})
    return {"devices": {"requests": requests}}


def claim_template(claim: ClaimPlan, namespace: str | None) -> dict:
    """The ResourceClaimTemplate of ``claim``."""
    metadata: dict = {"name": claim.template}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": RESOURCE_API, "kind": "ResourceClaimTemplate", "metadata": metadata,
            "spec": {"spec": claim_spec(claim)}}


def mapping_class_name(device: Device) -> str:
    """The name drawb gives a DeviceClass that maps ``device``'s legacy name (NVIDIA's demo naming)."""
    return f"{_label(device.request_name)}.extended.gpu.nvidia.com" if device.profile else "extended.gpu.nvidia.com"


def mapping_class(device: Device) -> dict:
    """A DeviceClass that serves the legacy name through DRA (needs the DRAExtendedResource gate)."""
    selector = f"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == " \
               f"'{'mig' if device.profile else 'gpu'}'"
    if device.profile:
        selector += f" && {device.selector}"
    return {"apiVersion": RESOURCE_API, "kind": "DeviceClass", "metadata": {"name": mapping_class_name(device)},
            "spec": {"selectors": [{"cel": {"expression": selector}}], "extendedResourceName": device.resource}}
