"""A small hand-made cluster for the browser and map tests: free, allocated and tainted GPUs, a GPU published
whole with MIG devices inside it, and MIG devices whose parent GPU is not published."""

from __future__ import annotations

DRIVER = "gpu.nvidia.com"


def _gpu(name: str, uuid: str, product: str = "NVIDIA H100 80GB HBM3", memory: str = "80Gi", taints=None) -> dict:
    device = {"name": name, "attributes": {"type": {"string": "gpu"}, "uuid": {"string": uuid},
                                           "productName": {"string": product}},
              "capacity": {"memory": {"value": memory}}}
    if taints:
        device["taints"] = taints
    return device


def _mig(name: str, parent: str, profile: str, memory: str) -> dict:
    return {"name": name, "attributes": {"type": {"string": "mig"}, "parentUUID": {"string": parent},
                                         "profile": {"string": profile}, "uuid": {"string": f"MIG-{name}"},
                                         "productName": {"string": "NVIDIA H100 80GB HBM3"}},
            "capacity": {"memory": {"value": memory}}}


def _slice(node: str, devices: list[dict]) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": devices}}


TAINT = [{"key": "nvidia.com/unhealthy", "value": "xid-79", "effect": "NoSchedule"}]

SLICES = [
    _slice("node-a", [
        _gpu("gpu-0", "GPU-a0"),
        _gpu("gpu-1", "GPU-a1"),
        _gpu("gpu-2", "GPU-a2", taints=TAINT),
        _gpu("gpu-10", "GPU-a10", product="NVIDIA H200", memory="141Gi"),
        _gpu("gpu-3", "GPU-a3"),
        _mig("gpu-3-mig-1g10gb-0", "GPU-a3", "1g.10gb", "10Gi"),
        _mig("gpu-3-mig-3g40gb-4", "GPU-a3", "3g.40gb", "40Gi"),
    ]),
    _slice("node-b", [
        _mig("gpu-0-mig-1g10gb-0", "GPU-b0", "1g.10gb", "10Gi"),
        _mig("gpu-0-mig-1g10gb-1", "GPU-b0", "1g.10gb", "10Gi"),
        _mig("gpu-0-mig-2g20gb-2", "GPU-b0", "2g.20gb", "20Gi"),
    ]),
]

CLAIMS = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "train", "namespace": "ml"},
     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
     "status": {"allocation": {"devices": {"results": [
         {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-1"},
         {"request": "gpu", "driver": DRIVER, "pool": "node-b", "device": "gpu-0-mig-1g10gb-1"}]}},
         "reservedFor": [{"resource": "pods", "name": "trainer", "uid": "u1"}]}},
]

NODES = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a", "labels": {
        "cloud.google.com/gke-nodepool": "h100-pool", "node.kubernetes.io/instance-type": "a3-highgpu-8g"}}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-b", "labels": {
        "node.kubernetes.io/instance-type": "a3-highgpu-1g"}}},
]


def devices():
    """The device frame of the hand-made cluster, allocations joined."""
    from drawb.inventory import device_frame

    return device_frame(SLICES, CLAIMS)
