"""Control-plane build helpers that need no Go toolchain run."""

from __future__ import annotations

from pathlib import Path

from drawb.testing.build import _ldflags, pinned_k8s_version, staging_modules
from drawb.testing.cluster import LocalCluster, count_nodes, lease_duration, node_monitor_grace, parse_feature_gates


def test_pinned_version_is_a_1_34_patch():
    assert pinned_k8s_version().startswith("v1.34.")


def test_staging_modules_read_from_replace_lines():
    go_mod = "replace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/kubelet => ./staging/src/k8s.io/kubelet\n)\n"
    assert staging_modules(go_mod) == ["k8s.io/api", "k8s.io/kubelet"]


def test_ldflags_stamp_component_base_version():
    flags = _ldflags("v1.37.2")
    assert "-X=k8s.io/component-base/version.gitVersion=v1.37.2" in flags
    assert "-X=k8s.io/component-base/version.gitMinor=37" in flags


def test_feature_gates_parse():
    assert parse_feature_gates("DRAExtendedResource=true, DRAPartitionableDevices=false") == {
        "DRAExtendedResource": True, "DRAPartitionableDevices": False}
    assert parse_feature_gates("") == {}


def test_large_clusters_get_longer_leases_and_grace():
    assert lease_duration(4) == 40 and node_monitor_grace(4) == 200
    assert lease_duration(10000) == 2000 and node_monitor_grace(10000) == 4000
    config = LocalCluster(nodes=5000, bin_dir=Path("/bin"))._config()
    assert config["options"]["nodeLeaseDurationSeconds"] == 1000
    kcm = next(p for p in config["componentsPatches"] if p["name"] == "kube-controller-manager")
    assert {"key": "node-monitor-grace-period", "value": "2000s"} in kcm["extraArgs"]


def test_nodes_counted_from_the_scenario():
    assert count_nodes("synthetic:12x8", None) == 12
    assert count_nodes("default", None) == 4
