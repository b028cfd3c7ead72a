"""Claims joined onto devices, and the claim, pod, class, slice and attribute frames."""

from __future__ import annotations

import copy

from drawb.inventory import (
    attribute_summary,
    claim_frame,
    class_frame,
    device_frame,
    pod_frame,
    slice_frame,
)
from tests.conftest import load_fixture


def _claim(name, devices, pods=(), request="gpu", deleting=False, namespace="team-a", template_pod=None):
    meta = {"name": name, "namespace": namespace}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if template_pod:
        meta["ownerReferences"] = [{"kind": "Pod", "name": template_pod, "controller": True}]
        meta["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
    claim = {
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": request, "exactly": {
            "deviceClassName": "gpu.nvidia.com", "count": len(devices) or 1}}]}},
    }
    if devices:
        claim["status"] = {"allocation": {"devices": {"results": [
            {"request": request, "driver": "gpu.nvidia.com", "pool": pool, "device": dev} for pool, dev in devices]}}}
        if pods:
            claim["status"]["reservedFor"] = [{"resource": "pods", "name": p, "uid": p} for p in pods]
    return claim


CLAIMS = [
    _claim("train", [("hgx-h200-03", "gpu-0"), ("hgx-h200-03", "gpu-1")], pods=["trainer-0"]),
    _claim("shared", [("dgx-h100-02", "gpu-4-mig-1g10gb-19-0")], pods=["a", "b"], template_pod="a"),
    _claim("waiting", []),
    _claim("done", [("a100-sxm-node-01", "gpu-3")], deleting=True),
]


def test_allocations_are_joined_onto_devices():
    frame = device_frame(load_fixture("resourceslices.yaml"), CLAIMS).set_index(["pool", "device"])
    assert frame.loc[("hgx-h200-03", "gpu-0"), "claim"] == "team-a/train"
    assert frame.loc[("hgx-h200-03", "gpu-1"), "request"] == "gpu"
    assert frame.loc[("hgx-h200-03", "gpu-1"), "reserved_for"] == ["trainer-0"]
    assert frame.loc[("dgx-h100-02", "gpu-4-mig-1g10gb-19-0"), "reserved_for"] == ["a", "b"]
    assert frame.loc[("a100-sxm-node-01", "gpu-3"), "claim"] == "team-a/done"
    assert frame.loc[("a100-sxm-node-01", "gpu-3"), "reserved_for"] == []
    assert frame["claim"].notna().sum() == 4
    free = frame[frame["claim"].isna()]
    assert free["request"].isna().all() and free["reserved_for"].isna().all()


def test_without_claims_the_allocation_columns_are_null():
    frame = device_frame(load_fixture("resourceslices.yaml"))
    assert frame["claim"].isna().all() and frame["reserved_for"].isna().all()


def test_claim_frame():
    frame = claim_frame(CLAIMS).set_index("name")
    assert frame["state"].to_dict() == {"train": "allocated,reserved", "shared": "allocated,reserved",
                                        "waiting": "pending", "done": "deleted,allocated"}
    assert frame.loc["train", "devices"] == ["gpu.nvidia.com/hgx-h200-03/gpu-0", "gpu.nvidia.com/hgx-h200-03/gpu-1"]
    assert frame.loc["shared", "reserved_for"] == ["a", "b"]
    assert frame.loc["train", "requests"] == "gpu: 2 x gpu.nvidia.com"
    assert bool(frame.loc["shared", "from_template"]) and not bool(frame.loc["train", "from_template"])
    assert frame.loc["shared", "owner_pod"] == "a"
    extended = copy.deepcopy(CLAIMS[0])  # the claim the scheduler makes for a pod's extended resources
    extended["metadata"].update(name="p-extended-resources-abcde", annotations={
        "resource.kubernetes.io/extended-resource-claim": "true"}, ownerReferences=[
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u", "controller": True}])
    row = claim_frame([extended]).iloc[0]
    assert row["owner_pod"] == "p" and not bool(row["from_template"])
    allocated = copy.deepcopy(CLAIMS[0])
    del allocated["status"]["reservedFor"]
    assert claim_frame([allocated])["state"].tolist() == ["allocated"]


def test_request_summary_forms():
    claim = {"metadata": {"name": "c", "namespace": "n"}, "spec": {"devices": {"requests": [
        {"name": "any", "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": "true"}}]},
            {"name": "small", "deviceClassName": "mig.nvidia.com", "count": 2}]},
        {"name": "all", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}},
        {"name": "beta", "deviceClassName": "gpu.nvidia.com", "count": 3},
    ]}}}
    assert claim_frame([claim])["requests"][0] == (
        "any: first of [1 x gpu.nvidia.com (1 selector) | 2 x mig.nvidia.com]; "
        "all: all x gpu.nvidia.com; beta: 3 x gpu.nvidia.com")


def test_pod_frame_resolves_template_claims():
    pods = [
        {"metadata": {"name": "trainer-0", "namespace": "team-a"},
         "spec": {"nodeName": "hgx-h200-03", "resourceClaims": [
             {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
             {"name": "extra", "resourceClaimName": "train"},
             {"name": "later", "resourceClaimTemplateName": "one-gpu"}]},
         "status": {"phase": "Running", "resourceClaimStatuses": [
             {"name": "gpu", "resourceClaimName": "trainer-0-gpu-x7k2p"}]}},
        {"metadata": {"name": "plain", "namespace": "team-a"}, "spec": {}, "status": {"phase": "Running"}},
        {"metadata": {"name": "legacy", "namespace": "team-a"}, "spec": {},
         "status": {"phase": "Pending", "extendedResourceClaimStatus": {"resourceClaimName": "legacy-ext-abc"}}},
    ]
    frame = pod_frame(pods).set_index("pod")
    assert list(frame.index) == ["trainer-0", "legacy"]
    assert frame.loc["trainer-0", "claims"] == ["gpu", "extra", "later"]
    assert frame.loc["trainer-0", "resource_claims"] == ["trainer-0-gpu-x7k2p", "train", None]
    assert frame.loc["trainer-0", "node"] == "hgx-h200-03"
    assert frame.loc["legacy", "extended_resource_claim"] == "legacy-ext-abc"
    assert frame.loc["legacy", "claims"] == []


def test_class_frame():
    classes = load_fixture("deviceclasses.yaml")
    frame = class_frame(classes).set_index("name")
    assert set(frame.index) == {c["metadata"]["name"] for c in classes}
    assert frame.loc["gpu.nvidia.com", "extended_resource_name"] == "nvidia.com/gpu"
    assert frame.loc["mig.nvidia.com", "selectors"] == [
        c["spec"]["selectors"][0]["cel"]["expression"] for c in classes if c["metadata"]["name"] == "mig.nvidia.com"]
    assert str(frame.loc["mig.nvidia.com", "extended_resource_name"]) == "<NA>"


def test_slice_frame_counts():
    slices = load_fixture("resourceslices-dynamic-mig-h100.yaml")
    frame = slice_frame(slices)
    assert len(frame) == 9
    assert frame["devices"].sum() == 208
    assert frame["shared_counter_sets"].tolist() == [8] + [0] * 8
    assert (frame["resource_slice_count"] == 9).all() and frame["current"].all()


def test_attribute_summary():
    frame = device_frame(load_fixture("resourceslices.yaml"))
    summary = attribute_summary(frame).set_index(["name", "driver"])
    product = summary.loc[("gpu.nvidia.com/productName", "gpu.nvidia.com")]
    assert product["kind"] == "attribute" and product["type"] == "string"
    assert product["devices"] == 38
    assert product["values"]["NVIDIA H100 80GB HBM3"] == 18
    assert product["distinct"] == 4
    memory = summary.loc[("gpu.nvidia.com/memory", "gpu.nvidia.com")]
    assert memory["kind"] == "capacity" and memory["devices"] == 38
    cd_type = summary.loc[("compute-domain.nvidia.com/type", "compute-domain.nvidia.com")]
    assert cd_type["values"] == {"channel": 4, "daemon": 4}


def test_list_responses_are_accepted_as_well_as_lists():
    slices = load_fixture("resourceslices.yaml")
    as_list = device_frame(slices, CLAIMS)
    as_response = device_frame({"kind": "ResourceSliceList", "items": slices},
                               {"kind": "ResourceClaimList", "items": CLAIMS})
    assert as_response.equals(as_list)
    assert claim_frame({"items": CLAIMS}).equals(claim_frame(CLAIMS))
    assert class_frame({"items": load_fixture("deviceclasses.yaml")}).shape == (5, 5)
