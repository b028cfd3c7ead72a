"""drawb.alloc remembers what it read from objects across calls; replacing a part of an object in
place (as the simulated cluster does with a claim's status) must be seen by the next call."""

from __future__ import annotations

from drawb.alloc import allocate

NODE = {"metadata": {"name": "node-1"}}
CLASS = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].ok'}}]}}


def _slice() -> dict:
    devices = [{"name": f"gpu-{i}", "attributes": {"ok": {"bool": True}}} for i in range(2)]
    return {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                                                "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "devices": devices}}  # fmt: skip


def _claim(name: str) -> dict:
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"devices": {"requests": [request]}}}


def _devices(result) -> list[str]:
    return [r["device"] for r in result[0]["devices"]["results"]]


def test_an_allocation_set_and_removed_in_place_is_seen():
    slices, held = [_slice()], _claim("held")
    assert _devices(allocate([_claim("c")], node=NODE, slices=slices, classes=[CLASS], allocated=[held])) == ["gpu-0"]
    held["status"] = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0"}]}}}
    assert _devices(allocate([_claim("c")], node=NODE, slices=slices, classes=[CLASS], allocated=[held])) == ["gpu-1"]
    held["status"].pop("allocation")
    assert _devices(allocate([_claim("c")], node=NODE, slices=slices, classes=[CLASS], allocated=[held])) == ["gpu-0"]


def test_replaced_device_attributes_and_device_lists_are_seen():
    slice_ = _slice()
    assert _devices(allocate([_claim("c")], node=NODE, slices=[slice_], classes=[CLASS])) == ["gpu-0"]
    slice_["spec"]["devices"][0]["attributes"] = {"ok": {"bool": False}}
    assert _devices(allocate([_claim("c")], node=NODE, slices=[slice_], classes=[CLASS])) == ["gpu-1"]
    slice_["spec"]["devices"] = [{"name": "gpu-9", "attributes": {"ok": {"bool": True}}}]
    assert _devices(allocate([_claim("c")], node=NODE, slices=[slice_], classes=[CLASS])) == ["gpu-9"]
