"""upgrade-check on the simulated cluster: each planted problem is found with its fix, a clean set gives nothing,
and each finding appears only when the upgrade crosses the minor that brings it (every fact from drawb.versions)."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path

import pytest

from drawb import versions
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.cluster.sim.scenarios.loader import _from_file
from drawb.commands.registry import run_line
from drawb.errors import UsageError
from drawb.render.sources import parse_text, read_sources
from drawb.session import Session
from drawb.upgrade import check, check_upgrade
from drawb.upgrade.inputs import CLUSTER, Inputs, Item, read_cluster
from tests.contract.upgrade import CLEAN, PLANTED, PLANTED_FINDINGS, found



@pytest.fixture(scope="module")
def cluster() -> SimCluster:
    return SimCluster("default", workloads=False)


def test_every_planted_problem_is_found_with_its_fix(cluster):
    report = check_upgrade(cluster, "1.37", read_sources([PLANTED]))
    assert found(report) == PLANTED_FINDINGS
    by_object = {f.object: f for f in report.findings}
    assert "only one of `sharedCounters` or `devices` is allowed" in by_object[
        "ResourceSlice dgx-h100-02-counters-and-devices"].message
    assert "resources: [resourceclaims/binding], verbs: [update, patch]" in by_object["ClusterRole my-scheduler"].fix
    assert "resourceclaims/driver" in by_object["ClusterRole my-network-driver"].fix
    assert "no such key: index" in by_object["ResourceClaimTemplate gpu-test/by-index"].message
    assert by_object["ResourceClaimTemplate gpu-test/by-index"].fix.startswith("read gpu.nvidia.com/uuid or "
                                                                              "resource.kubernetes.io/pciBusID")
    assert report.driver_release == "v0.4 (told from the slices)" and report.exit_status == 1


def test_a_clean_set_and_the_default_cluster_give_no_finding(cluster):
    report = check_upgrade(cluster, "1.37", read_sources([CLEAN]))
    assert report.findings == [] and report.exit_status == 0 and "no findings" in report.summary()


@pytest.mark.parametrize("target, kinds", [
    ("1.34", set()),
    ("1.35", {"slice-shape", "served", "attribute"}),
    ("1.36", {"slice-shape", "meaning", "rbac", "served", "attribute"}),
])
def test_findings_come_with_the_minor_that_brings_them(cluster, target, kinds):
    found = {f.kind for f in check_upgrade(cluster, target, read_sources([PLANTED])).findings}
    if target == "1.34":  # no upgrade: only what the cluster's own minor already refuses or misreads
        assert found == {"served", "attribute"}
    else:
        assert found == kinds


def test_a_downgrade_is_refused(cluster):
    newer = SimCluster(dataclasses.replace(build_scenario("default"), server_version="1.36"), workloads=False)
    with pytest.raises(UsageError, match="older than the cluster's 1.36: not an upgrade"):
        check_upgrade(newer, "1.35")


def _inputs(current: str, target: str, *, gates=None, served=("v1",), items=()) -> Inputs:
    return Inputs(versions.rules(current), versions.rules(target), f"v{current}.0", list(items), dict(gates or {}),
                  list(served))


def test_gates_in_use_that_the_target_locks_or_removes():
    findings, _, _ = check(_inputs("1.34", "1.37", gates={"DRAAdminAccess": False, "DRAExtendedResource": True,
                                                       "DRADeviceTaints": False}))
    by_gate = {f.path: f for f in findings}
    assert by_gate["DRAAdminAccess"].level == "error" and "locked to true" in by_gate["DRAAdminAccess"].message
    assert by_gate["DRAExtendedResource"].level == "warning" and "locked to that value" in by_gate["DRAExtendedResource"].message
    assert "DRADeviceTaints" not in by_gate  # GA in 1.37 but not locked: DRADeviceTaints=false still starts
    assert check(_inputs("1.34", "1.35", gates={"DRAAdminAccess": False}))[0] == []  # still beta there
    assert check(_inputs("1.34", "1.37", gates={"DRAAdminAccess": True}))[0] == []  # at its default: not in use
    inputs = _inputs("1.34", "1.37", gates={"DRAAdminAccess": False})
    without = {n: g for n, g in inputs.target.gates.items() if n != "DRAAdminAccess"}
    inputs.target = dataclasses.replace(inputs.target, gates=without)  # a minor that has removed the gate
    (gone,), _, _ = check(inputs)
    assert gone.level == "error" and "has no gate DRAAdminAccess" in gone.message


def test_a_version_the_cluster_serves_by_runtime_config_and_the_target_does_not():
    (finding,), _, _ = check(_inputs("1.34", "1.37", served=("v1", "v1beta2")))
    assert finding.kind == "served" and finding.level == "warning"
    assert finding.path == "--runtime-config=resource.k8s.io/v1beta2"


def _template(expression: str) -> Item:
    return Item("t.yaml", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                           "metadata": {"name": "t", "namespace": "n"},
                           "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {
                               "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": expression}}]}}]}}}})


@pytest.mark.parametrize("release, expression, level, fix", [
    ("v0.4", "device.attributes['gpu.nvidia.com'].pcieBusID == '0000:1b:00.0'", "error",
     "read resource.kubernetes.io/pciBusID instead"),
    ("v0.4", "device.attributes['resource.kubernetes.io'].numaNode == 0", "error",
     "upgrade the driver to v0.5 or later first, or leave the attribute out"),
    ("v25.12", "has(device.attributes['gpu.nvidia.com'].index) && device.attributes['gpu.nvidia.com'].index == 0",
     "warning", "read gpu.nvidia.com/uuid or resource.kubernetes.io/pciBusID instead"),
    ("v25.3", "device.attributes['gpu.nvidia.com'].index == 0", None, None),
    ("v0.5", "device.attributes['resource.kubernetes.io'].numaNode == 0", None, None),
])
def test_selectors_are_checked_against_the_named_driver_release(release, expression, level, fix):
    findings, chosen, told = check(_inputs("1.34", "1.34", items=[_template(expression)]), release)
    assert (chosen.name, told) == (release, "as named")
    assert [(f.level, f.fix) for f in findings] == ([(level, fix)] if level else [])


def test_a_v25_3_cluster_reads_index_and_an_upgrade_of_its_driver_would_break_it():
    text = (resources.files("drawb.cluster.sim.scenarios") / "default.yaml").read_text()
    scenario = build_scenario("default")
    old = _from_file("default", text.replace("driver_release: v0.4", "driver_release: v25.3"), where="old")
    old_cluster = SimCluster(old, workloads=False)
    assert scenario.resource_slices != old.resource_slices
    claim = [parse_text("index.yaml", Path(PLANTED).read_text().split("---")[-1])]
    assert check_upgrade(old_cluster, "1.34", claim).findings == []
    (finding,) = check_upgrade(old_cluster, "1.34", claim, driver_release="v0.4").findings
    assert finding.kind == "attribute" and "v0.4 (as named)" in finding.message


def test_allocated_claims_keep_their_devices_and_are_not_checked(cluster):
    items, _ = read_cluster(cluster)
    claim = _template("device.attributes['gpu.nvidia.com'].index == 0").obj
    held = Item(CLUSTER, {**claim, "kind": "ResourceClaim", "spec": claim["spec"]["spec"],
                          "status": {"allocation": {"devices": {"results": []}}}})
    assert check(_inputs("1.34", "1.37", items=[*items, held]))[0] == []


def test_the_command_prints_the_report_or_json_with_the_exit_status():
    session = Session()
    report = run_line(session, f"upgrade-check --to 1.37 {PLANTED}")
    assert "fix: use v1, `%dra convert FILE` rewrites it" in str(report) and "<table>" in report._repr_html_()
    data = json.loads(run_line(session, f"upgrade-check --to 1.37 {CLEAN} --json", prog="drawb"))
    assert data["findings"] == [] and data["current"] == "1.34" and data["target"] == "1.37"
    result = run_line(session, f"upgrade-check --to 1.37 {PLANTED} --json", prog="drawb")
    assert result.exit_status == 1 and json.loads(result)["counts"]["rbac"] == 2
    assert json.loads(result)["driverReleaseFacts"]["tags"] == ["v0.4.0", "v0.4.1"]
    with pytest.raises(UsageError, match="required: --to"):
        run_line(session, "upgrade-check")


def test_a_cluster_slice_of_both_shapes_is_fixed_by_the_driver_release_that_splits_them():
    combined = Item(CLUSTER, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                              "spec": {"driver": "gpu.nvidia.com", "nodeName": "n", "pool": {"name": "n"},
                                       "sharedCounters": [{"name": "c", "counters": {"m": {"value": "1"}}}],
                                       "devices": [{"name": "d"}]}})
    (finding,), _, _ = check(_inputs("1.34", "1.35", items=[combined]))
    assert finding.kind == "slice-shape" and "the NVIDIA driver does from v25.12, with DynamicMIG" in finding.fix
    assert check(_inputs("1.35", "1.37", items=[combined]))[0] == []  # the cluster refuses it already


def test_a_constraint_over_an_attribute_a_slice_publishes_as_a_list_changes_meaning():
    slice_ = Item(CLUSTER, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                            "spec": {"driver": "net.example.com", "nodeName": "n", "pool": {"name": "n"},
                                     "devices": [{"name": "nic-0", "attributes": {"rails": {"ints": [0, 1]}}}]}})
    claim = Item("c.yaml", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": "c", "namespace": "n"},
                            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "nic"}}],
                                                 "constraints": [{"distinctAttribute": "net.example.com/rails"},
                                                                 {"matchAttribute": "net.example.com/speed"}]}}})
    (finding,), _, _ = check(_inputs("1.35", "1.36", items=[slice_, claim]))
    assert finding.path == "spec.devices.constraints[0].distinctAttribute"
    assert "ResourceSlice s publishes it as a list" in finding.message and "share no value" in finding.message
    assert check(_inputs("1.36", "1.37", items=[slice_, claim]))[0] == []  # 1.36 compares lists already
