"""``snapshot from-files``: kubectl output in, a scrubbed snapshot out, that replays like the original."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest
import yaml

from drawb.cli import main
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.snapshot import NotASnapshot, read
from drawb.snapshot.kubectl import from_files
from drawb.cluster.snapshot.replay import replay
from drawb.testing import snapshot_compare as compare

SECRET = "s3cr3t-token-value"


def kubectl_list(cluster: SimCluster) -> dict:
    """What `kubectl get resourceslices,deviceclasses,resourceclaims,pods,nodes -A -o yaml` prints, with the
    fields a real server adds that must not reach a snapshot."""
    items = []
    for kind in ("ResourceSlice", "DeviceClass", "ResourceClaim", "Pod", "Node"):
        for obj in cluster.list(kind):
            obj = copy.deepcopy(obj)
            meta = obj["metadata"]
            meta["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
            meta["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps({"token": SECRET}),
                                   **(meta.get("annotations") or {})}
            if kind == "Pod":
                for c in obj["spec"]["containers"]:
                    c["env"] = [{"name": "TOKEN", "value": SECRET}]
                    c["envFrom"] = [{"secretRef": {"name": "db-credentials"}}]
                obj["spec"]["volumes"] = [{"name": "creds", "secret": {"secretName": "db-credentials"}}]
            if kind == "Node":
                obj["status"]["addresses"] = [{"type": "InternalIP", "address": "10.1.2.3"}]
                obj["status"]["nodeInfo"]["machineID"] = "f00dfeed"
            items.append(obj)
    items.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-credentials"},
                  "data": {"password": SECRET}})
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


@pytest.fixture(scope="module")
def original() -> SimCluster:
    return SimCluster("default")


def test_from_files_keeps_the_state_and_leaves_secrets_out(original, tmp_path, capsys):
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump(kubectl_list(original)))
    assert main(["snapshot", "from-files", str(tmp_path / "cluster.yaml"), "-o", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr()
    assert "Note: built from kubectl output: the server version and feature gates are unknown" in out.err
    assert "left out: 1 Secret" in out.err
    text = (tmp_path / "s.json").read_text()
    for leak in (SECRET, "db-credentials", "managedFields", "last-applied", "10.1.2.3", "f00dfeed", '"env"'):
        assert leak not in text, leak
    snapshot = read(tmp_path / "s.json")
    assert snapshot.server_version is None and snapshot.kubernetes_version == "1.34"
    assert set(snapshot.gate_sources.values()) == {"default"}
    copy_ = replay(tmp_path / "s.json")
    for name, frame in compare.inventory(original).items():
        pd.testing.assert_frame_equal(compare.inventory(copy_)[name], frame, obj=name)


def test_json_files_and_a_kubernetes_version(original, tmp_path):
    (tmp_path / "cluster.json").write_text(json.dumps(kubectl_list(original)))
    snapshot = from_files([tmp_path / "cluster.json"], kubernetes_version="v1.36.1")
    assert snapshot.kubernetes_version == "1.36" and snapshot.feature_gates["DRAPartitionableDevices"] is True


def test_files_without_dra_objects_are_named(tmp_path, capsys):
    (tmp_path / "pods.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, "
                                        "metadata: {name: x}}\n")
    assert main(["snapshot", "from-files", str(tmp_path / "pods.yaml"), "-o", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("NotASnapshot: no ResourceSlice, DeviceClass, ResourceClaim or Node in") and "1 Secret" in err
    assert not (tmp_path / "s.json").exists()
    (tmp_path / "bad.yaml").write_text("items: [\n")
    with pytest.raises(Exception, match="ends in the middle of its YAML"):
        from_files([tmp_path / "bad.yaml"])
    with pytest.raises(NotASnapshot, match="holds a list, not Kubernetes objects"):
        (tmp_path / "text.yaml").write_text("- just\n- words\n")
        from_files([tmp_path / "text.yaml"])
