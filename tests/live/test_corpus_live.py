"""The shared corpus (tests/data/corpus) through the real API server and the simulated cluster, gate set by gate set.

Both clusters get the same version and gates; each corpus file is applied to both, in order, and the
two must agree: the same accept or reject, and the same stored objects under the comparison rule of
tests/contract/corpus.py. Gate sets: the 1.34 defaults (the session's control plane) and every DRA gate on
(a second control plane).
"""

from __future__ import annotations

import pytest

from drawb.api.gates import DRA_GATES
from drawb.cluster.kube import KubeCluster
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.contract.corpus import NAMESPACES, Outcome, load_corpus, outcome_differences, run_case

pytestmark = pytest.mark.live

CASES = load_corpus()
ALL_ON = dict.fromkeys(DRA_GATES, True)


def _simulated(cp) -> SimCluster:
    scenario = build_scenario("default")
    scenario.feature_gates = {g: cp.feature_enabled(g) for g in DRA_GATES}
    scenario.server_version = cp.api().get("/version")["gitVersion"]
    return SimCluster(scenario, workloads=False)


def _run_both(cp) -> dict[str, tuple[Outcome, Outcome]]:
    kube, sim = KubeCluster(kubeconfig=str(cp.kubeconfig)), _simulated(cp)
    api = cp.api()
    try:
        for cluster in (kube, sim):
            cluster.apply(NAMESPACES)
        for ns in NAMESPACES:  # the ServiceAccount admission plugin needs it before a pod is accepted
            name = ns["metadata"]["name"]
            wait_for(lambda: api.get_or_none(path_for("ServiceAccount", "default", name)), what=f"default SA in {name}")
        return {case.name: (run_case(kube, case), run_case(sim, case)) for case in CASES}
    finally:
        _clean_up(kube)
        kube.close()


def _clean_up(kube: KubeCluster) -> None:
    """Delete what the corpus created on the real cluster (the session's is shared with other modules)."""
    for kind in ("ResourceSlice", "DeviceClass", "PriorityClass", "Namespace"):
        for obj in kube.list(kind):
            name = obj["metadata"]["name"]
            if name.startswith("corpus") and obj["metadata"].get("labels", {}).get("app.kubernetes.io/managed-by") == "drawb":
                kube.delete(kind, name)


@pytest.fixture(scope="module")
def default_gates(control_plane):
    return _run_both(control_plane)


@pytest.fixture(scope="module")
def gates_on(start_control_plane):
    cp = start_control_plane(ALL_ON)
    try:
        assert all(cp.feature_enabled(g) for g in ALL_ON)
        yield _run_both(cp)
    finally:
        cp.cluster.down()


def test_the_corpus_is_large_and_covers_both_answers():
    assert len(CASES) >= 40
    verdicts = [c.expected("default") for c in CASES]
    assert verdicts.count("accept") >= 15 and verdicts.count("reject") >= 15
    kinds = {d["kind"] for c in CASES for d in c.documents}
    assert {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "Pod", "Namespace",
            "ConfigMap", "PriorityClass", "Deployment", "Service"} <= kinds


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_default_gates_agree(default_gates, case):
    real, sim = default_gates[case.name]
    assert real.verdict == case.expected("default"), f"{case.why}: the real server said {real.error or 'accept'}"
    assert outcome_differences(case, real, sim) == []


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_all_gates_on_agree(gates_on, case):
    real, sim = gates_on[case.name]
    assert real.verdict == case.expected("on"), f"{case.why}: the real server said {real.error or 'accept'}"
    assert outcome_differences(case, real, sim) == []
