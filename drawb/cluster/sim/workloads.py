"""A few running DRA workloads so a fresh simulated cluster has claims and pods to show.

Each is what the API server would hold after the scheduler allocated the claim and the pod
started: a ResourceClaim with ``status.allocation`` and ``reservedFor``, and a Running pod
whose ``status.resourceClaimStatuses`` names the claim made from its template.
"""

from __future__ import annotations

from drawb.cluster.sim.publish import stable_uuid

NAMESPACE = "gpu-demo"


def _claim(name: str, pod: str, request: str, device_class: str, node: str, devices: list[str],
           template: str | None, selector: str | None = None) -> dict:
    exactly: dict = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": len(devices)}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    meta: dict = {"name": name, "namespace": NAMESPACE, "uid": stable_uuid("claim", name)[5:]}
    if template:
        meta["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": pod, "controller": True,
                                    "uid": stable_uuid("pod", pod)[5:]}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": request, "exactly": exactly}]}},
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": request, "driver": "gpu.nvidia.com", "pool": node, "device": d}
                        for d in devices
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"resource": "pods", "name": pod, "uid": stable_uuid("pod", pod)[5:]}],
        },
    }


def _pod(name: str, node: str, claim: str, template: str | None, image: str, command: list[str]) -> dict:
    source = {"resourceClaimTemplateName": template} if template else {"resourceClaimName": claim}
    status: dict = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    if template:
        status["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": stable_uuid("pod", name)[5:]},
        "spec": {
            "nodeName": node,
            "resourceClaims": [{"name": "gpu", **source}],
            "containers": [
                {"name": "ctr", "image": image, "command": command, "resources": {"claims": [{"name": "gpu"}]}}
            ],
        },
        "status": status,
    }


def demo_workloads() -> list[dict]:
    """Claims, a template and pods of two running workloads on the default scenario."""
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "single-gpu", "namespace": NAMESPACE},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}},
    }
    image = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        template,
        _claim("trainer-gpu-x7k2p", "trainer", "gpu", "gpu.nvidia.com", "hgx-h200-03", ["gpu-0"], "single-gpu"),
        _pod("trainer", "hgx-h200-03", "trainer-gpu-x7k2p", "single-gpu", image, ["python", "train.py"]),
        _claim("notebook-mig", "notebook", "mig", "mig.nvidia.com", "dgx-h100-02", ["gpu-5-mig-3g40gb-9-4"],
               None, "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"),
        _pod("notebook", "dgx-h100-02", "notebook-mig", None, image, ["jupyter", "lab"]),
    ]
