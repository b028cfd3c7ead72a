"""Redaction renames whole names only, keeps order and equality, and reaches every string."""

from __future__ import annotations

from drawb.cluster.snapshot.document import Snapshot
from drawb.snapshot.redact import redact


def node(name: str, hostname: str | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "8f0e1c2a-0000-4000-8000-00000000abcd",
                         "labels": {"kubernetes.io/hostname": hostname or name}}}


def snapshot(objects: dict) -> Snapshot:
    return Snapshot(objects=objects, kubernetes_version="1.34", server_version="v1.34.4",
                    feature_gates={}, gate_sources={}, source="cluster at https://10.0.0.1:6443",
                    notes=["gpu-1 said hello"])


def test_whole_names_in_sorted_order_and_distinct_hostnames():
    nodes = [node("gpu-10"), node("gpu-1", hostname="ip-10-0-0-7.internal"), node("gpu-2")]
    rs = {"kind": "ResourceSlice", "metadata": {"name": "gpu-10-gpu.nvidia.com-x2k"},
          "spec": {"nodeName": "gpu-10", "pool": {"name": "gpu-10"}, "devices": [{"name": "gpu-1", "attributes": {
              "uuid": {"string": "GPU-4CF8DB2D-1111-2222-3333-444455556666"},
              "pciBusID": {"string": "0000:1b:00.0"},
              "resource.kubernetes.io/pcieRoot": {"string": "pci0000:15"}}}]}}
    claim = {"kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": {"devices": {"requests": [{"name": "r", "exactly": {
        "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].uuid == "
                                             "'GPU-4cf8db2d-1111-2222-3333-444455556666'"}}]}}]}}}
    out, renaming = redact(snapshot({"Node": nodes, "ResourceSlice": [rs], "ResourceClaim": [claim]}))
    assert renaming.names == {"gpu-1": "node-001", "gpu-10": "node-002", "gpu-2": "node-003",
                              "ip-10-0-0-7.internal": "host-001"}
    assert [n["metadata"]["labels"]["kubernetes.io/hostname"] for n in out.objects["Node"]] == [
        "node-002", "host-001", "node-003"]
    [slice_] = out.objects["ResourceSlice"]
    assert slice_["metadata"]["name"] == "node-002-gpu.nvidia.com-x2k" and slice_["spec"]["pool"]["name"] == "node-002"
    device = slice_["spec"]["devices"][0]
    assert device["name"] == "gpu-1"  # a device name is not a node name, though it spells one
    uuid = device["attributes"]["uuid"]["string"]
    assert uuid.startswith("GPU-") and "4cf8db2d" not in uuid.lower()
    expression = out.objects["ResourceClaim"][0]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]
    assert uuid[4:] in expression["cel"]["expression"]  # the selector still matches the renamed device
    assert device["attributes"]["pciBusID"]["string"] == "1000:01:00.0"
    assert device["attributes"]["resource.kubernetes.io/pcieRoot"]["string"] == "pci1000:02"
    assert out.redacted and "10.0.0.1" not in out.source and out.notes == ["node-001 said hello"]
    assert all(n["metadata"]["uid"] == out.objects["Node"][0]["metadata"]["uid"] for n in out.objects["Node"])
