"""core/v1 Node objects for simulated GPU nodes."""

from __future__ import annotations

from drawb.cluster.sim.publish import GpuNode, stable_uuid

KUBELET_VERSION = "v1.34.3"


def node_object(scenario: str, node: GpuNode) -> dict:
    """The Node a kubelet would register for ``node`` (labels, capacity, Ready)."""
    labels = {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": node.gpu_model.product_name.replace("NVIDIA ", "NVIDIA-").replace(" ", "-"),
        **node.labels,
    }
    resources = {"cpu": "96", "memory": "1056Gi", "pods": "110", "ephemeral-storage": "3500Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "uid": stable_uuid("node", scenario, node.name)[5:], "labels": labels},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {"kubeletVersion": KUBELET_VERSION, "architecture": "amd64", "operatingSystem": "linux"},
        },
    }
