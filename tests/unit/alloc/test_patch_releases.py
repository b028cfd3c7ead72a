"""Behaviour that a patch release changed: ``kubernetes_version="v1.36.3"`` allocates as that release's
scheduler does, a bare minor as the newest patch drawb knows."""

from __future__ import annotations

import pytest

from drawb.alloc import AllocationError, SchedulerCrash, allocate

NODE = {"metadata": {"name": "node-1"}}
PER_REQUEST = "claim ns/big, request gpu: adding 33 devices exceeds the claim limit of 32, with 0 already accounted for"
CLAIM_SUM = "claim ns/big: number of requested devices 33 exceeds the claim limit of 32"


def _class(driver: str) -> dict:
    selector = {"cel": {"expression": f'device.driver == "{driver}"'}}
    return {"metadata": {"name": driver}, "spec": {"selectors": [selector]}}


def _claim(name: str, *requests: tuple[str, str, int]) -> dict:
    exact = [{"name": n, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}}
             for n, cls, count in requests]
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"devices": {"requests": exact}}}


def _slice(name: str, driver: str, pool: str, count: int, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"driver": driver, "nodeName": "node-1", **spec,
                                                  "pool": {"name": pool, "generation": 1, "resourceSliceCount": count}}}


@pytest.mark.parametrize(("version", "message"), [
    ("v1.34.11", CLAIM_SUM), ("v1.34.12", PER_REQUEST),
    ("v1.35.8", CLAIM_SUM), ("v1.35.9", PER_REQUEST),
    ("v1.35.4", CLAIM_SUM), ("v1.36.3", CLAIM_SUM),  # the releases the local control plane runs
    ("v1.36.4", CLAIM_SUM), ("v1.36.5", PER_REQUEST),
    ("v1.37.0", CLAIM_SUM), ("v1.37.1", PER_REQUEST),
    ("1.34", PER_REQUEST), ("1.36", PER_REQUEST),  # a bare minor: the newest patch drawb knows
])  # fmt: skip
def test_the_claim_limit_is_checked_per_request_from_the_patch_that_moved_it(version, message):
    slices = [_slice("gpus", "gpu.example.com", "gpus", 1, devices=[{"name": f"gpu-{i}"} for i in range(40)])]
    with pytest.raises(AllocationError) as info:
        allocate([_claim("big", ("gpu", "gpu.example.com", 33))], node=NODE, slices=slices,
                 classes=[_class("gpu.example.com")], kubernetes_version=version)
    assert str(info.value) == message


def _partitioned(driver: str) -> list[dict]:
    """One pool named "shared" of ``driver``: a counter set of 8Gi and one device that takes all of it."""
    counters = [{"name": "memory", "counters": {"memory": {"value": "8Gi"}}}]
    device = {"name": "part", "consumesCounters": [{"counterSet": "memory", "counters": {"memory": {"value": "8Gi"}}}]}
    return [_slice(f"{driver}-counters", driver, "shared", 2, sharedCounters=counters),
            _slice(f"{driver}-devices", driver, "shared", 2, devices=[device])]


@pytest.mark.parametrize(("version", "allocates"), [
    ("v1.35.10", False), ("v1.36.3", False), ("v1.36.4", True), ("1.36", True), ("v1.37.0", True),
])  # fmt: skip
def test_pools_of_one_name_share_counters_across_drivers_until_1_36_4(version, allocates):
    slices = _partitioned("a.example.com") + _partitioned("b.example.com")
    claim = _claim("two", ("a", "a.example.com", 1), ("b", "b.example.com", 1))
    result = allocate([claim], node=NODE, slices=slices, classes=[_class("a.example.com"), _class("b.example.com")],
                      kubernetes_version=version, feature_gates={"DRAPartitionableDevices": True})
    assert (result is not None) == allocates


@pytest.mark.parametrize(("version", "crashes"), [
    ("v1.34.4", False), ("v1.35.4", True), ("v1.35.5", True), ("v1.35.6", False), ("1.35", False),
    ("v1.36.0", True), ("v1.36.1", True), ("v1.36.2", False), ("v1.37.0", False),
])  # fmt: skip
def test_an_all_request_over_devices_that_consume_counters_crashes_the_scheduler_of_early_patches(version, crashes):
    slices = _partitioned("a.example.com")
    if version.startswith("v1.34"):  # 1.34 keeps the counters in the devices' slice
        slices = [_slice("a.example.com", "a.example.com", "shared", 1, sharedCounters=slices[0]["spec"]["sharedCounters"],
                         devices=slices[1]["spec"]["devices"])]
    claim = _claim("all", ("a", "a.example.com", 1))
    claim["spec"]["devices"]["requests"][0]["exactly"] = {"deviceClassName": "a.example.com", "allocationMode": "All"}
    run = dict(node=NODE, slices=slices, classes=[_class("a.example.com")], kubernetes_version=version,
               feature_gates={"DRAPartitionableDevices": True})
    if not crashes:
        assert allocate([claim], **run) is not None
        return
    with pytest.raises(SchedulerCrash) as info:
        allocate([claim], **run)
    fixed = "v1.35.6" if version.startswith("v1.35") else "v1.36.2"
    assert str(info.value) == (
        f"claim ns/all, request a: kube-scheduler {version} crashes here (a nil pointer dereference in its allocator: "
        "device part of an allocationMode All request consumes shared counters), so the pod gets no verdict; "
        f"{fixed} and later allocate it")
