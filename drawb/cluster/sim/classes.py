"""The DeviceClasses the NVIDIA DRA driver's Helm chart installs (resource.k8s.io/v1)."""

from __future__ import annotations

_GPU = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '{}'"
_CD = "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == '{}'"


def device_class(name: str, expression: str, extended_resource_name: str | None = None) -> dict:
    """A DeviceClass object with one CEL selector."""
    spec: dict = {"selectors": [{"cel": {"expression": expression}}]}
    if extended_resource_name:
        spec["extendedResourceName"] = extended_resource_name
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def nvidia_device_classes(extended_resource: bool = True) -> list[dict]:
    """The chart's five classes; ``gpu.nvidia.com`` maps ``nvidia.com/gpu`` when asked."""
    return [
        device_class("gpu.nvidia.com", _GPU.format("gpu"), "nvidia.com/gpu" if extended_resource else None),
        device_class("mig.nvidia.com", _GPU.format("mig")),
        device_class("vfio.gpu.nvidia.com", _GPU.format("vfio")),
        device_class("compute-domain-daemon.nvidia.com", _CD.format("daemon")),
        device_class(
            "compute-domain-default-channel.nvidia.com",
            _CD.format("channel") + " && device.attributes['compute-domain.nvidia.com'].id == 0",
        ),
    ]
