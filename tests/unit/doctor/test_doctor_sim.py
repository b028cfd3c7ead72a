"""The doctor on the simulated cluster: gates probed through the simulated API server's field dropping."""

from __future__ import annotations

import copy
import json

import pytest

from drawb import versions
from drawb.cluster.protocol import KINDS
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.commands.registry import run_line
from drawb.doctor import diagnose
from drawb.session import Session

DRA_GATES = versions.rules(versions.DEFAULT).field_gates  # the gates whose fields the API server drops


def default_gates(minor: int) -> dict[str, bool]:
    """The defaults of DRA_GATES in Kubernetes 1.<minor>."""
    rules = versions.rules(f"1.{minor}")
    return {gate: rules.gates[gate].default for gate in DRA_GATES}


def statuses(report) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


def check(report, name):
    [found] = [c for c in report.checks if c.name == name]
    return found


def everything(cluster) -> dict[str, list]:
    return {kind: cluster.list(kind) for kind in KINDS}


def scenario_with(**changes):
    scenario = copy.deepcopy(build_scenario("default"))
    for key, value in changes.items():
        setattr(scenario, key, value)
    return scenario


def test_default_scenario_reports_the_134_default_gates_and_changes_nothing():
    cluster = SimCluster()
    before = everything(cluster)
    report = diagnose(cluster)
    assert everything(cluster) == before
    got = statuses(report)
    for gate, on in default_gates(34).items():
        assert got[gate] == ("PASS" if on else "WARN"), (gate, check(report, gate))
    assert "dropped spec.extendedResourceName" in check(report, "DRAExtendedResource").evidence
    assert "was refused" in check(report, "DRAAdminAccess").evidence  # on: the namespace lacks the admin label
    assert "kept spec.devices.requests[].firstAvailable" in check(report, "DRAPrioritizedList").evidence
    assert report.worst == "WARN" and report.exit_status == 0
    assert report.simulated and "simulated" in report.summary()


def test_all_gates_on_in_the_scenario_are_all_probed_on():
    cluster = SimCluster(scenario_with(feature_gates=dict.fromkeys(DRA_GATES, True)))
    report = diagnose(cluster)
    got = statuses(report)
    assert all(got[gate] == "PASS" for gate in DRA_GATES), {g: got[g] for g in DRA_GATES}
    assert "implied" in check(report, "DRAResourceClaimDeviceStatus").evidence


def test_a_gate_turned_off_that_is_on_by_default_is_seen():
    cluster = SimCluster(scenario_with(feature_gates={"DRAPrioritizedList": False, "DRAAdminAccess": False}))
    report = diagnose(cluster)
    assert check(report, "DRAPrioritizedList").status == "WARN"
    assert "refused, as the field was dropped" in check(report, "DRAPrioritizedList").evidence
    assert "dropped spec.devices.requests[].exactly.adminAccess" in check(report, "DRAAdminAccess").evidence
    assert "--feature-gates=DRAAdminAccess=true" in check(report, "DRAAdminAccess").fix


def test_healthy_checks_pass_on_the_default_scenario():
    report = diagnose(SimCluster())
    for name in ("server version", "resource.k8s.io API", "NVIDIA DeviceClasses", "GPU nodes publish slices",
                 "pools", "device plugin and DRA", "priority and preemption"):
        assert check(report, name).status == "PASS", check(report, name)
    assert "4 of 4 GPU nodes" in check(report, "GPU nodes publish slices").evidence


def test_no_device_classes_fails_with_the_driver_fix():
    report = diagnose(SimCluster(scenario_with(device_classes=[])))
    c = check(report, "NVIDIA DeviceClasses")
    assert c.status == "FAIL" and "no DeviceClass at all" in c.evidence
    assert "install the NVIDIA DRA driver" in c.fix and report.exit_status == 1


def test_gpu_node_without_slices_fails():
    scenario = scenario_with()
    scenario.resource_slices = [s for s in scenario.resource_slices if s["spec"]["nodeName"] != "hgx-h200-03"]
    report = diagnose(SimCluster(scenario))
    c = check(report, "slices on hgx-h200-03")
    assert c.status == "FAIL" and "label nvidia.com/gpu.present=true" in c.evidence
    assert "spec.nodeName=hgx-h200-03" in c.fix


def test_incomplete_pool_fails():
    scenario = scenario_with()
    gpu = next(s for s in scenario.resource_slices if s["spec"]["nodeName"] == "dgx-h100-02"
               and s["spec"]["driver"] == "gpu.nvidia.com")
    gpu["spec"]["pool"]["resourceSliceCount"] = 2
    c = check(diagnose(SimCluster(scenario)), "pool gpu.nvidia.com/dgx-h100-02")
    assert c.status == "FAIL" and "1 of 2 slices present" in c.evidence


def test_device_plugin_node_with_dra_slices_fails():
    scenario = scenario_with()
    node = next(n for n in scenario.nodes if n["metadata"]["name"] == "a100-sxm-node-01")
    node["status"]["allocatable"]["nvidia.com/gpu"] = "8"
    c = check(diagnose(SimCluster(scenario)), "double booking on a100-sxm-node-01")
    assert c.status == "FAIL" and "offers 8 nvidia.com/gpu through the device plugin and 8 devices" in c.evidence


def test_pending_pod_points_at_why_with_the_front_ends_command():
    cluster = SimCluster()
    cluster.apply([  # 9 GPUs: no node has them, so the simulated scheduler leaves the pod pending
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                                                     "count": 9}}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waiting", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}],
                  "resourceClaims": [{"name": "g", "resourceClaimName": "c"}]}, "status": {"phase": "Pending"}},
    ])
    report = diagnose(cluster).name_commands("%dra")
    c = check(report, "pods pending on claims")
    assert c.status == "WARN" and "default/waiting" in c.evidence and c.fix == "see why: `%dra why default/waiting`"


def test_priority_classes_bring_the_no_preemption_caveat():
    cluster = SimCluster()
    cluster.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"},
                    "value": 1000}])
    c = check(diagnose(cluster), "priority and preemption")
    assert c.status == "WARN" and "urgent" in c.evidence and "does not preempt" in c.evidence


def test_the_command_returns_the_report_or_json():
    session = Session()
    report = run_line(session, "doctor")
    assert "doctor: simulated cluster 'default'" in str(report) and "<table>" in report._repr_html_()
    data = json.loads(run_line(session, "doctor --json"))
    assert data["simulated"] and data["result"] == "WARN"
    assert {c["name"] for c in data["checks"]} >= set(DRA_GATES)
    assert data["featureGatesMetric"]["DRAPrioritizedList"] is True


def test_scenario_gates_must_be_known():
    from drawb.cluster.sim.scenarios.loader import ScenarioError, _parse_gates

    with pytest.raises(ScenarioError, match="unknown feature gate.*DRAExtendedResources"):
        _parse_gates("x", {"DRAExtendedResources": True})


def test_cli_exit_status_and_json_on_the_simulated_cluster():
    import subprocess
    import sys
    from pathlib import Path

    drawb = Path(sys.executable).with_name("drawb")
    out = subprocess.run([str(drawb), "doctor"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"doctor: simulated cluster 'default', Kubernetes {versions.rules(versions.DEFAULT).version}:")
    out = subprocess.run([str(drawb), "doctor", "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and json.loads(out.stdout)["counts"]["FAIL"] == 0
