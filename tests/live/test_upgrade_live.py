"""upgrade-check against the real control plane at Kubernetes 1.34 (to 1.37): a cluster with planted problems
(a gate set that 1.37 locks, a scheduler's role without resourceclaims/binding, a template reading `index`) and
tests/data/upgrade's manifests (one planted problem per finding kind) give each planted finding; the session's
cluster with the clean manifests gives none; and the simulated cluster holding the same objects, version and gates
gives the same findings."""

from __future__ import annotations

import os
import uuid

import pytest

from drawb.cluster.kube import KubeCluster
from drawb.cluster.protocol import kind_of
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import Scenario
from drawb.render.sources import read_sources
from drawb.testing import build
from drawb.testing.cluster import parse_feature_gates
from drawb.upgrade import check_upgrade
from drawb.upgrade.inputs import cluster_gates, read_cluster
from tests.contract import upgrade

pytestmark = pytest.mark.live

PLANTED, CLEAN = read_sources([upgrade.PLANTED]), read_sources([upgrade.CLEAN])
TARGET = "1.37"


@pytest.fixture(scope="module", autouse=True)
def _a_1_34_cluster():
    if not build.target_k8s_version().startswith("v1.34."):
        pytest.skip(f"this test checks an upgrade from Kubernetes 1.34; the live tier runs {build.target_k8s_version()}")


@pytest.fixture(scope="module")
def planted(start_control_plane):
    """A 1.34 cluster started with DRAAdminAccess=false (1.36 locks it on), holding a scheduler's ClusterRole
    without resourceclaims/binding and a ResourceClaimTemplate whose selector reads `index`."""
    cp = start_control_plane({"DRAAdminAccess": False})
    api = cp.api()
    suffix = uuid.uuid4().hex[:6]
    namespace = cp.create_namespace("upgrade")
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": f"upgrade-scheduler-{suffix}"},
            "rules": [{"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]},
                      {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims", "resourceclaims/status"],
                       "verbs": ["get", "list", "watch", "update"]}]}
    api.request("POST", kind_of("ClusterRole").path(), role)
    api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "by-index", "namespace": namespace},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": "gpu.nvidia.com",
                    "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].index == 0"}}]}}]}}}})
    cluster = KubeCluster(kubeconfig=str(cp.kubeconfig))
    try:
        yield cluster, role["metadata"]["name"], namespace
    finally:
        cluster.close()
        cp.cluster.down()


def _twin(cluster: KubeCluster) -> SimCluster:
    """The simulated cluster holding ``cluster``'s objects (those upgrade-check reads, nodes and namespaces), its
    version and its DRA gates."""
    items, _ = read_cluster(cluster)
    by_kind = lambda kind: [dict(i.obj) for i in items if i.kind == kind]  # noqa: E731
    listed = lambda kind: [{"apiVersion": kind_of(kind).api_version, "kind": kind, **o}  # noqa: E731
                           for o in cluster.list(kind)]
    scenario = Scenario(
        name="twin", description="the live cluster's objects", gpu_nodes=[], nodes=listed("Node"),
        resource_slices=by_kind("ResourceSlice"), device_classes=by_kind("DeviceClass"),
        feature_gates=cluster_gates(cluster), server_version=cluster.server_version(),
        objects=listed("Namespace") + [dict(i.obj) for i in items
                                       if i.kind not in ("ResourceSlice", "DeviceClass")],
        simulated_kubelets=False)
    return SimCluster(scenario, workloads=False)


def test_each_planted_problem_is_found_on_the_real_cluster_and_the_same_on_its_simulated_twin(planted):
    cluster, role, namespace = planted
    report = check_upgrade(cluster, TARGET, PLANTED)
    assert report.server_version.startswith("v1.34.") and report.driver_release == "v0.4 (told from the slices)"
    in_cluster = {
        ("gate", "error", "feature gates"),
        ("rbac", "error", f"ClusterRole {role}"),
        ("attribute", "error", f"ResourceClaimTemplate {namespace}/by-index"),
    }
    assert upgrade.found(report) == upgrade.PLANTED_FINDINGS | in_cluster, str(report)
    gate = next(f for f in report.findings if f.kind == "gate")
    assert gate.path == "DRAAdminAccess" and "locked to true" in gate.message
    assert report.exit_status == 1 and report.notes == []

    twin = check_upgrade(_twin(cluster), TARGET, PLANTED)
    assert twin.findings == report.findings
    assert twin.driver_release == report.driver_release


def test_the_clean_manifests_on_the_sessions_cluster_give_no_finding(kube):
    report = check_upgrade(kube, TARGET, CLEAN)
    set_by_hand = set(parse_feature_gates(os.environ.get("DRAWB_FEATURE_GATES", "")))
    assert [f for f in report.findings if not (f.kind == "gate" and f.path in set_by_hand)] == [], str(report)
    assert check_upgrade(_twin(kube), TARGET, CLEAN).findings == report.findings
