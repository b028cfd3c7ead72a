"""The simulated cluster at every Kubernetes minor drawb knows, with the feature gates chosen: what its API
server, scheduler, kubelets and doctor then report, what its API server keeps, and the named refusals."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from drawb import versions
from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import ScenarioError
from drawb.cluster.sim.version import DraTurnedOff
from drawb.doctor import diagnose
from drawb.errors import UsageError
from drawb.session import Session

DEFAULT_YAML = Path(__file__).parents[3] / "drawb/cluster/sim/scenarios/default.yaml"


@pytest.fixture(scope="module", params=versions.known())
def at_minor(request):
    rules = versions.rules(request.param)
    return rules, SimCluster("synthetic:2x2", kubernetes_version=request.param)


def test_each_minor_reports_its_release_gates_group_versions_and_kubelets(at_minor):
    rules, cluster = at_minor
    assert cluster.server_version() == rules.version  # the newest patch drawb knows
    assert cluster.feature_gates_metric() == rules.defaults()
    assert cluster.group_versions("resource.k8s.io") == sorted(rules.served)
    assert {n["status"]["nodeInfo"]["kubeletVersion"] for n in cluster.list("Node")} == {rules.version}
    assert cluster.lifecycle.kubernetes_version == rules.version  # the simulated scheduler's allocator ...
    assert cluster.lifecycle.feature_gates == rules.defaults()  # ... with the cluster's gates


def test_the_doctor_reports_every_gate_of_the_minor(at_minor):
    rules, cluster = at_minor
    report = diagnose(cluster)
    checks = {c.name: c for c in report.checks}
    assert checks["server version"].evidence.startswith(f"{rules.version}: DRA is GA")
    assert f"(the {rules.minor} default)" in checks["resource.k8s.io API"].evidence
    assert set(rules.gates) <= set(checks)
    for name, gate in rules.gates.items():
        assert checks[name].status == ("PASS" if gate.default else "WARN"), checks[name]
        assert f"in {rules.minor}, {'on' if gate.default else 'off'} by default" in checks[name].evidence
    assert report.feature_gates_metric == rules.defaults()


def test_a_full_release_is_reported_as_given():
    cluster = SimCluster("synthetic:1x1", kubernetes_version="v1.36.1")
    assert cluster.server_version() == "v1.36.1" and cluster.kubernetes_version == "1.36"
    assert cluster.list("Node")[0]["status"]["nodeInfo"]["kubeletVersion"] == "v1.36.1"


def test_chosen_gates_are_the_metric_and_the_doctor_sees_them():
    cluster = SimCluster("synthetic:1x1", kubernetes_version="1.36",
                         feature_gates={"DRAListTypeAttributes": True, "DRADeviceTaints": False})
    metric = cluster.feature_gates_metric()
    assert metric["DRAListTypeAttributes"] is True and metric["DRADeviceTaints"] is False
    assert cluster.lifecycle.feature_gates == metric
    checks = {c.name: c for c in diagnose(cluster).checks}
    assert checks["DRAListTypeAttributes"].status == "PASS" and checks["DRADeviceTaints"].status == "WARN"
    assert "dropped spec.devices[].taints" in checks["DRADeviceTaints"].evidence


def slice_with_list_attribute() -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "lists"},
            "spec": {"driver": "example.com", "nodeName": "gpu-node-00000",
                     "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "d0", "attributes": {"cores": {"ints": [1, 2]}, "model": {"string": "x"}}}]}}


@pytest.mark.parametrize("on", [True, False])
def test_a_list_valued_attribute_is_kept_or_dropped_per_dra_list_type_attributes(on):
    cluster = SimCluster("synthetic:1x1", kubernetes_version="1.36", feature_gates={"DRAListTypeAttributes": on})
    if on:
        [stored] = cluster.apply([slice_with_list_attribute()], dry_run=True)
        assert stored["spec"]["devices"][0]["attributes"]["cores"] == {"ints": [1, 2]}
    else:  # the attribute is left without a value, which the API server's validation refuses
        with pytest.raises(ClusterError) as refused:
            cluster.apply([slice_with_list_attribute()], dry_run=True)
        assert "cores" in str(refused.value)


def test_a_minor_without_the_field_refuses_it_by_its_schema():
    with pytest.raises(ClusterError, match="ints"):
        SimCluster("synthetic:1x1", kubernetes_version="1.35").apply([slice_with_list_attribute()], dry_run=True)


def test_the_refusals_are_named_and_say_what_to_write():
    with pytest.raises(versions.UnknownFeatureGate, match="'DRAListTypeAttributes' does not exist in Kubernetes 1.34") as e:
        SimCluster("synthetic:1x1", kubernetes_version="1.34", feature_gates={"DRAListTypeAttributes": True})
    assert "in Kubernetes 1.36 and later" in e.value.hint
    with pytest.raises(versions.UnknownFeatureGate) as e:
        SimCluster("synthetic:1x1", feature_gates={"DRAExtendedResources": True})
    assert "did you mean DRAExtendedResource?" in e.value.hint
    with pytest.raises(versions.UnknownFeatureGate, match="'SchedulerQueueingHints' is not a DRA gate"):
        SimCluster("synthetic:1x1", feature_gates={"SchedulerQueueingHints": True})
    with pytest.raises(versions.LockedFeatureGate, match="DRAExtendedResource is locked to true in Kubernetes 1.37"):
        SimCluster("synthetic:1x1", kubernetes_version="1.37", feature_gates={"DRAExtendedResource": False})
    with pytest.raises(DraTurnedOff, match="DynamicResourceAllocation=false turns DRA off"):
        SimCluster("synthetic:1x1", kubernetes_version="1.34", feature_gates={"DynamicResourceAllocation": False})
    with pytest.raises(versions.UnsupportedKubernetesVersion, match="Kubernetes 1.33 is older than drawb models"):
        SimCluster("synthetic:1x1", kubernetes_version="1.33")
    with pytest.raises(versions.NotAKubernetesVersion):
        SimCluster("synthetic:1x1", kubernetes_version="latest")


def test_a_newer_version_runs_the_newest_rules_with_the_named_warning():
    newer = f"1.{versions.rules(versions.newest()).number + 1}"
    with pytest.warns(versions.NewerKubernetesVersion, match=f"Kubernetes {newer} is newer than drawb knows"):
        cluster = SimCluster("synthetic:1x1", kubernetes_version=newer)
    assert cluster.server_version() == f"v{newer}" and cluster.kubernetes_version == versions.newest()
    assert cluster.feature_gates_metric() == versions.rules(versions.newest()).defaults()


@pytest.mark.parametrize(("text", "expected"), [
    ("a bad value", "feature gate entry 'a bad value' in 'a bad value' has no value"),
    ("DRADeviceTaints=yes", "DRADeviceTaints=yes: 'yes' is not true or false"),
    ("=true", "has no gate name"),
])
def test_a_malformed_feature_gates_value_is_named(text, expected):
    with pytest.raises(versions.MalformedFeatureGates, match=expected) as e:
        versions.parse_feature_gates(text)
    assert "DRAExtendedResource=true,DRADeviceTaints=true" in e.value.hint


def test_feature_gates_values_read_as_components_read_them():
    assert versions.parse_feature_gates("DRAExtendedResource=true, DRADeviceTaints=False,,X=1") == {
        "DRAExtendedResource": True, "DRADeviceTaints": False, "X": True}


def scenario_file(tmp_path: Path, extra: str) -> str:
    path = tmp_path / "mine.yaml"
    path.write_text(DEFAULT_YAML.read_text().replace("feature_gates: {}", extra))
    return str(path)


def test_a_scenario_file_names_its_version_and_gates(tmp_path):
    path = scenario_file(tmp_path, 'kubernetes_version: "1.37"\nfeature_gates: {DRAListTypeAttributes: true}')
    cluster = SimCluster(path)
    assert cluster.server_version() == versions.rules("1.37").release
    assert cluster.feature_gates_metric()["DRAListTypeAttributes"] is True
    assert SimCluster(scenario_file(tmp_path, "kubernetes_version: 1.36")).kubernetes_version == "1.36"
    assert SimCluster(path, kubernetes_version="1.36").kubernetes_version == "1.36"  # connect's option wins


@pytest.mark.parametrize(("extra", "error", "expected"), [
    ("kubernetes_version: 1.3", ScenarioError, r"kubernetes_version 1\.3 is not a Kubernetes version"),
    ('kubernetes_version: "one"', ScenarioError, "'one' is not a Kubernetes version"),
    ('kubernetes_version: "1.33"', versions.UnsupportedKubernetesVersion, "Kubernetes 1.33 is older than drawb models"),
    ('kubernetes_version: "1.35"\nfeature_gates: {DRAListTypeAttributes: true}', versions.UnknownFeatureGate,
     "'DRAListTypeAttributes' does not exist in Kubernetes 1.35"),
])
def test_a_scenario_files_bad_version_is_refused_naming_the_file(tmp_path, extra, error, expected):
    with pytest.raises(error, match=expected) as e:
        SimCluster(scenario_file(tmp_path, extra))
    assert "mine.yaml" in str(e.value)


def test_the_session_connects_at_the_version_and_its_stamp_says_the_minor():
    session = Session()
    session.connect(scenario="synthetic:1x1", kubernetes_version="1.36", feature_gates="DRADeviceTaints=false")
    session.cluster.list("Node")
    assert session.simulated_source() == f"{session.cluster.description} (Kubernetes 1.36 rules)"
    assert session.cluster.feature_gates_metric()["DRADeviceTaints"] is False


def test_the_session_options_choose_the_simulated_clusters_version_and_gates():
    session = Session(kubernetes_version="1.37", feature_gates="DRAListTypeAttributes=true", scenario="synthetic:1x1")
    assert session.cluster.server_version() == versions.rules("1.37").release
    assert session.cluster.feature_gates_metric()["DRAListTypeAttributes"] is True
    assert session.rules_version == "1.37" and Session().rules_version == versions.DEFAULT


def test_a_snapshot_or_a_real_cluster_takes_no_version_or_gates(tmp_path):
    from drawb.cluster.connect import connect

    with pytest.raises(UsageError, match="a snapshot replays the version and gates it was saved with"):
        connect(snapshot=str(tmp_path / "s.json"), kubernetes_version="1.36")
    with pytest.raises(UsageError, match="a real cluster runs its own"):
        connect(kubeconfig=str(tmp_path / "k"), feature_gates={"DRADeviceTaints": True})


def test_a_known_version_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SimCluster("synthetic:1x1", kubernetes_version=versions.newest())


def test_the_simulated_scheduler_allocates_by_a_list_valued_attribute_at_136_with_its_gate_on():
    from drawb.cluster.sim.clock import ManualClock

    sim = SimCluster("synthetic:1x1", workloads=False, clock=ManualClock(), kubernetes_version="1.36",
                     feature_gates={"DRAListTypeAttributes": True})
    node = sim.list("Node")[0]["metadata"]["name"]
    lists = slice_with_list_attribute()
    lists["spec"].update(nodeName=node, pool={"name": node, "generation": 1, "resourceSliceCount": 1})
    lists["spec"]["devices"].append({"name": "d1", "attributes": {"cores": {"ints": [3]}}})
    sim.apply([lists,
               {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "example"},
                "spec": {"selectors": [{"cel": {"expression": "device.driver == 'example.com'"}}]}},
               {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "three", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "example", "selectors": [
                    {"cel": {"expression": "3 in device.attributes['example.com'].cores"}}]}}]}}},
               {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {"resourceClaims": [{"name": "r", "resourceClaimName": "three"}],
                         "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "r"}]}}]}}])
    [result] = sim.get("ResourceClaim", "three", "default")["status"]["allocation"]["devices"]["results"]
    assert (result["driver"], result["device"]) == ("example.com", "d1")
    assert sim.get("Pod", "p", "default")["spec"]["nodeName"] == node


def test_every_gate_the_minor_lets_change_can_be_set_and_is_reported(at_minor):
    rules, _ = at_minor
    flipped = {name: not gate.default for name, gate in rules.gates.items()
               if not gate.locked and name != "DynamicResourceAllocation"}  # off: refused (below)
    cluster = SimCluster("synthetic:1x1", kubernetes_version=rules.minor, feature_gates=flipped)
    assert cluster.feature_gates_metric() == {**rules.defaults(), **flipped}
    checks = {c.name: c for c in diagnose(cluster).checks}
    for name, on in flipped.items():
        if name != "DRADeviceBindingConditions":  # its fields stay only while DRAResourceClaimDeviceStatus is on too
            assert checks[name].status == ("PASS" if on else "WARN"), checks[name]
