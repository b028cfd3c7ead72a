"""core/v1 Node objects for simulated GPU nodes (the simulated cluster sets their kubelet version: its own)."""

from __future__ import annotations

from drawb.cluster.sim.publish import GpuNode, stable_uuid


def node_object(scenario: str, node: GpuNode) -> dict:
    """The Node a kubelet would register for ``node`` (labels, capacity with what a device plugin
    advertises, Ready)."""
    return gpu_node_object(scenario, node.name, node.gpu_model.product_name, node.labels, node.extended_resources)


def gpu_node_object(scenario: str, name: str, product_name: str, extra_labels: dict[str, str],
                    extended_resources: dict[str, int] | None = None) -> dict:
    """The Node of a GPU host called ``name`` whose GPUs are ``product_name`` (``extended_resources``: what
    device plugins advertise in its capacity and allocatable, e.g. ``{"nvidia.com/gpu": 8}``)."""
    labels = {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": product_name.replace("NVIDIA ", "NVIDIA-").replace(" ", "-"),
        **extra_labels,
    }
    resources = {"cpu": "96", "memory": "1056Gi", "pods": "110", "ephemeral-storage": "3500Gi",
                 **{key: str(count) for key, count in (extended_resources or {}).items()}}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": stable_uuid("node", scenario, name)[5:], "labels": labels},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux"},
        },
    }
