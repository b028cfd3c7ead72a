"""From 1.35 a ResourceSlice holds sharedCounters or devices, not both: the API server refuses one with both
while DRAPartitionableDevices is on (off, it drops sharedCounters first and stores the devices)."""

from __future__ import annotations

import copy

import pytest
import yaml

from drawb.cluster.protocol import ClusterError
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.render import validate_documents
from tests.contract.corpus import CORPUS

[BOTH] = [d for d in yaml.safe_load_all((CORPUS / "39-slice-shared-counters.yaml").read_text()) if d]
REFUSAL = "only one of `sharedCounters` or `devices` is allowed"


def _errors_and_warnings(version: str) -> tuple[list[str], list[str]]:
    issues = validate_documents([copy.deepcopy(BOTH)], kubernetes_version=version)
    return ([i.message for i in issues if i.level == "error"], [i.message for i in issues if i.level == "warning"])


def test_validate_refuses_both_where_the_gate_is_on_by_default_and_warns_where_it_is_off():
    assert REFUSAL not in str(_errors_and_warnings("1.34"))
    errors, warnings = _errors_and_warnings("1.35")  # DRAPartitionableDevices alpha, off
    assert REFUSAL not in str(errors) and any("put the counters in a slice of their own" in w for w in warnings)
    for version in ("1.36", "1.37"):  # beta, on
        assert REFUSAL in _errors_and_warnings(version)[0]


@pytest.mark.parametrize(("version", "gate", "refused"), [
    ("1.34", True, False), ("1.35", True, True), ("1.35", False, False), ("1.37", True, True), ("1.37", False, False)])
def test_the_simulated_api_server_refuses_both_with_the_gate_on_from_1_35(version, gate, refused):
    scenario = build_scenario("default")
    scenario.server_version = version
    scenario.feature_gates = {"DRAPartitionableDevices": gate}
    sim = SimCluster(scenario, workloads=False)
    if refused:
        with pytest.raises(ClusterError, match=f'"corpus-counters" is invalid: spec: {REFUSAL}'):
            sim.apply([copy.deepcopy(BOTH)])
    else:
        [stored] = sim.apply([copy.deepcopy(BOTH)])
        assert ("sharedCounters" in stored["spec"]) == gate
