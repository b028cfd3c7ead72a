"""The shared corpus through the simulated cluster alone: each file gets the answer the real API server gave
(recorded in the file's header, proven on the local control plane by tests/live/test_corpus_live.py),
and the comparison rule of tests/contract/corpus.py sees what it must."""

from __future__ import annotations

import copy

import pytest

from drawb import versions
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.render import validate_documents
from tests.contract.corpus import NAMESPACES, Case, Outcome, load_corpus, outcome_differences, run_case

RULES = versions.rules(versions.DEFAULT)  # the simulated cluster's default version
CASES = load_corpus()


def gate_sets(rules: versions.Rules) -> dict[str, dict[str, bool]]:
    """The defaults, and every gate whose fields the API server drops on, or off (with what depends on them)."""
    every = {state: rules.with_dependencies(dict.fromkeys(rules.field_gates, state == "on")) for state in ("on", "off")}
    return {"default": {}, **{state: {g: v for g, v in gates.items() if g in rules.gates} for state, gates in every.items()}}


GATE_SETS = gate_sets(RULES)


def _run(gates: dict[str, bool], rules: versions.Rules = RULES) -> dict[str, Outcome]:
    scenario = build_scenario("default")
    scenario.feature_gates = gates
    scenario.server_version = rules.release
    sim = SimCluster(scenario, workloads=False)
    sim.apply(NAMESPACES)
    return {case.name: run_case(sim, case) for case in CASES}


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict[str, Outcome]]:
    return {name: _run(gates) for name, gates in GATE_SETS.items()}


@pytest.mark.parametrize("gate_set", ["default", "on", "off"])
@pytest.mark.parametrize("minor", versions.known())
def test_each_file_gets_the_real_servers_answer_at_every_minor(minor, gate_set):
    rules = versions.rules(minor)
    gates = gate_sets(rules)[gate_set]
    outcomes = _run(gates, rules)
    wrong = {c.name: outcomes[c.name].error or "accepted" for c in CASES
             if outcomes[c.name].verdict != c.expected(rules, gates)}
    assert wrong == {}


def test_gated_fields_are_dropped_by_default_and_kept_with_the_gates_on(outcomes):
    def spec(gate_set, case):
        return outcomes[gate_set][case].stored[0]["spec"]

    assert "extendedResourceName" not in spec("default", "02-class-extended-resource-name")
    assert spec("on", "02-class-extended-resource-name")["extendedResourceName"] == "example.com/gpu"
    assert "sharedCounters" not in spec("default", "39-slice-shared-counters")
    assert "taints" not in spec("default", "40-slice-device-taints")["devices"][0]
    assert spec("on", "40-slice-device-taints")["devices"][0]["taints"]
    assert spec("default", "14-claim-distinct-attribute")["devices"]["constraints"][0]["distinctAttribute"]
    assert spec("default", "19-claim-count-zero")["devices"]["requests"][0]["exactly"]["count"] == 1


def test_a_refused_manifest_leaves_nothing_behind():
    scenario = build_scenario("default")
    sim = SimCluster(scenario, workloads=False)
    sim.apply(NAMESPACES)
    [whole] = [c for c in CASES if c.name == "57-whole-manifest-one-bad"]
    assert not run_case(sim, whole).accepted
    assert sim.get("DeviceClass", "corpus-whole") is None
    [doomed] = [c for c in CASES if c.name == "60-namespace-with-a-bad-object"]
    assert not run_case(sim, doomed).accepted
    assert sim.get("Namespace", "corpus-doomed") is None


def _case(*docs: dict) -> Case:
    return Case("x", list(docs), "", [((), "accept")])


CLAIM = {"kind": "ResourceClaim", "metadata": {"name": "c"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g", "count": 1}}]}}}


def test_the_rule_ignores_server_defaults_but_not_drops_or_inventions():
    case = _case(CLAIM)
    real = Outcome(True, [{**CLAIM, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "g", "count": 1, "allocationMode": "ExactCount"}}]}}}])
    assert outcome_differences(case, real, Outcome(True, [CLAIM])) == []  # a default the sim does not set
    dropped = {**CLAIM, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "g"}}]}}}
    assert outcome_differences(case, real, Outcome(True, [dropped])) == [
        "ResourceClaim/c: spec.devices.requests[0].exactly.count: the real server kept 1, the simulated cluster dropped it"]
    invented = {**CLAIM, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "g", "count": 1, "adminAccess": False}}]}}}
    assert outcome_differences(case, real, Outcome(True, [invented])) == [
        "ResourceClaim/c: spec.devices.requests[0].exactly.adminAccess: the simulated cluster has False, the real server does not"]
    assert outcome_differences(case, real, Outcome(False, error="no")) == [
        "real server: accept, simulated cluster: reject (no)"]
    assert outcome_differences(case, Outcome(False, status=404), Outcome(False, status=422))


def test_validate_connected_to_the_simulated_cluster_gives_each_file_the_real_servers_answer():
    """validate refuses exactly what the server refuses; a namespace that does not exist is its one warning
    instead (the refusal, 404, comes at apply, and validate's warning names it)."""
    sim = SimCluster(build_scenario("default"), workloads=False)
    sim.apply(NAMESPACES)
    verdicts, warned = {}, set()
    for case in CASES:
        issues = validate_documents(copy.deepcopy(case.documents), kubernetes_version=sim.server_version(), cluster=sim)
        verdicts[case.name] = "reject" if any(i.level == "error" for i in issues) else "accept"
        if any('namespaces "no-such-namespace" not found' in i.message for i in issues if i.level == "warning"):
            warned.add(case.name)
    wrong = {c.name: verdicts[c.name] for c in CASES if verdicts[c.name] != c.expected(RULES, {})}
    assert wrong == dict.fromkeys(warned, "accept") == {"29-claim-missing-namespace": "accept",
                                                        "50-pod-missing-namespace": "accept"}
