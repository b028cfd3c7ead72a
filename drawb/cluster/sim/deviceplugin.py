"""The GPUs a device plugin hands a container that asks for ``nvidia.com/gpu`` on a node whose allocatable
offers it (the kubelet's device manager): as many whole GPUs as the container asks for, the node's GPUs not
held by another pod there, in the order the node's driver publishes them (the real plugin prefers GPUs close
to each other; the simulation takes the first free ones). The node's GPUs are the full GPUs (``type: gpu``)
its ResourceSlices describe; a node that publishes none hands out nothing, and the container's
``nvidia-smi`` finds no device.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from drawb.api.resourcefit import count_of, node_allocatable
from drawb.alloc.extended import container_requests

GPU_RESOURCE = "nvidia.com/gpu"

Obj = Mapping[str, Any]


def _is_gpu(device: Obj) -> bool:
    kind = ((device.get("attributes") or {}).get("type") or {})
    return kind.get("string") == "gpu"


def serves_gpus(node: Obj) -> bool:
    """Whether a device plugin on ``node`` advertises GPUs (its allocatable offers ``nvidia.com/gpu``)."""
    return bool(node_allocatable(node).get(GPU_RESOURCE))


def assign(pod: Obj, devices: Iterable[Obj], taken: set[str]) -> dict[str, list[str]]:
    """Container name -> the names of the GPUs it gets, for ``pod`` on a node that ``serves_gpus`` whose published
    ``devices`` are given, those named in ``taken`` held by other pods."""
    free = [d["name"] for d in devices if _is_gpu(d) and d["name"] not in taken]
    handed: dict[str, list[str]] = {}
    for container in (pod.get("spec") or {}).get("containers") or ():
        count = count_of(container_requests(container).get(GPU_RESOURCE, 0))
        if count:
            handed[container.get("name", "")], free = free[:count], free[count:]
    return handed
