"""The Cluster protocol contract against the real API server, and KubeCluster's live store."""

from __future__ import annotations

import copy

import pytest

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.cluster import SimCluster
from drawb.inventory import device_frame
from drawb.testing.build import target_k8s_version
from drawb.testing.waiting import wait_for
from tests.contract.cases import CASES
from tests.contract.serviceaccounts import SERVICE_ACCOUNT_CASES

pytestmark = pytest.mark.live


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_kube_cluster_honours_the_contract(case, kube, namespace):
    case(kube, namespace)


def test_the_server_is_the_version_under_test(kube):
    assert kube.server_version() == target_k8s_version()


@pytest.mark.parametrize("case", SERVICE_ACCOUNT_CASES, ids=lambda c: c.__name__)
def test_kube_cluster_keeps_service_accounts_as_the_sim_does(case, kube, namespace):
    case(kube, namespace)


def test_real_and_simulated_clusters_show_the_same_devices(kube):
    columns = ["node", "driver", "pool", "device", "gpu.nvidia.com/productName", "gpu.nvidia.com/uuid",
               "gpu.nvidia.com/profile", "capacity:gpu.nvidia.com/memory"]
    real = device_frame(kube.list("ResourceSlice"))
    sim = device_frame(SimCluster(workloads=False).list("ResourceSlice"))
    key = ["driver", "node", "device"]
    real = real[columns].sort_values(key).reset_index(drop=True)
    sim = sim[columns].sort_values(key).reset_index(drop=True)
    assert len(real) == len(sim) == 46
    assert real.astype(str).equals(sim.astype(str))


def test_watch_keeps_the_store_live(kube, control_plane):
    informer = kube.watch("ResourceSlice")
    before = len(kube.list("ResourceSlice"))
    template = copy.deepcopy(next(s for s in kube.list("ResourceSlice") if s["spec"]["driver"] == "gpu.nvidia.com"))
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "drawb-watch-test"},
        "spec": {**template["spec"], "pool": {"name": "watch-pool", "generation": 1, "resourceSliceCount": 1}},
    }
    seen = []
    informer.add_handler(lambda kind, obj: seen.append((kind, obj["metadata"]["name"])))
    try:
        kube.apply([slice_])
        wait_for(lambda: ("ADDED", "drawb-watch-test") in seen, what="ADDED event for the new slice")
        assert len(kube.list("ResourceSlice")) == before + 1
    finally:
        kube.delete("ResourceSlice", "drawb-watch-test")
    wait_for(lambda: ("DELETED", "drawb-watch-test") in seen, what="DELETED event")
    assert len(kube.list("ResourceSlice")) == before


def test_logs_stream_from_a_pod(kube, control_plane, namespace):
    kube.apply([
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "single-gpu", "namespace": namespace},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "smi", "namespace": namespace},
         "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
                  "containers": [{"name": "ctr", "image": "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04",
                                  "command": ["nvidia-smi", "-L"], "resources": {"claims": [{"name": "gpu"}]}}]}},
    ])
    wait_for(lambda: (kube.get("Pod", "smi", namespace) or {}).get("status", {}).get("phase") == "Running",
             what="pod smi Running", timeout=60)
    lines = wait_for(lambda: [line for line in kube.logs("smi", namespace) if line.startswith("GPU 0:")],
                     what="nvidia-smi line in the log", timeout=60)
    assert "(UUID: GPU-" in lines[0]


def test_sim_rejects_a_bad_name_with_the_api_servers_words(kube, namespace):
    bad = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "Not_A_DNS_Name", "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}},
    }
    messages = []
    for cluster in (kube, SimCluster()):
        with pytest.raises(ClusterError) as caught:
            cluster.apply([bad], dry_run=True)
        messages.append(str(caught.value).removesuffix(" (HTTP 422)"))
    assert messages[0] == messages[1]


def test_devices_stay_live_on_a_real_cluster(control_plane):
    from drawb.session import Session

    session = Session(kubeconfig=str(control_plane.kubeconfig))
    try:
        first = session.devices()
        assert (first["driver"] == "gpu.nvidia.com").sum() == 38
        template = next(s for s in session.cluster.list("ResourceSlice") if s["spec"]["driver"] == "gpu.nvidia.com")
        extra = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "drawb-live-test"},
            "spec": {**copy.deepcopy(template["spec"]), "pool": {"name": "live-pool", "generation": 1,
                                                                  "resourceSliceCount": 1}},
        }
        session.cluster.apply([extra])
        wait_for(lambda: len(session.devices()) > len(first), what="new slice in frame")
        assert len(session.devices()) == len(first) + len(template["spec"]["devices"])
        session.cluster.delete("ResourceSlice", "drawb-live-test")
        wait_for(lambda: len(session.devices()) == len(first), what="deleted slice gone from frame")
    finally:
        session.close()


def test_a_real_apply_dry_runs_once_then_writes(kube, namespace, monkeypatch):
    """Rendered.apply(dry_run=False) of a claim template and a pod: per object one GET (is it drawb's?),
    one dry-run PATCH and one PATCH, counted on the requests KubeCluster sends to the real API server."""
    import drawb.cluster.kube.cluster as kube_module
    from drawb.render import render

    sent: list[tuple[str, bool]] = []
    real_request = kube_module.request

    def counting(client, method, path, **kwargs):
        if f"/namespaces/{namespace}/" in path:  # not the watches other tests' informers may still run
            sent.append((method, (kwargs.get("query") or {}).get("dryRun") == "All"))
        return real_request(client, method, path, **kwargs)

    monkeypatch.setattr(kube_module, "request", counting)
    rendered = render("single-gpu", namespace=namespace, cluster=kube)
    sent.clear()  # render itself reads the cluster's classes and version
    rendered.apply(kube, dry_run=False)
    assert len(rendered.documents) == 2
    assert sorted(sent) == [("GET", False)] * 2 + [("PATCH", False)] * 2 + [("PATCH", True)] * 2
    assert kube.get("Pod", rendered.documents[1]["metadata"]["name"], namespace) is not None
