"""Run the shared corpus through a control plane's API server and a simulated cluster of its version and gates."""

from __future__ import annotations

from dataclasses import dataclass

from drawb import versions
from drawb.cluster.kube import KubeCluster
from drawb.cluster.protocol import MANAGED_BY_LABEL
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.testing import build
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.contract.corpus import NAMESPACES, Case, Outcome, outcome_differences, run_case

RULES = versions.rules(build.target_k8s_version())  # the live tier's version


def dra_gates(cp) -> dict[str, bool]:
    """Every DRA gate of the control plane's minor, as its API server has it."""
    enabled = cp.cluster.feature_gates_enabled()
    return {g: enabled.get(g, False) for g in RULES.gates}


def simulated_twin(cp) -> SimCluster:
    """A simulated cluster with the control plane's version and DRA gates."""
    scenario = build_scenario("default")
    scenario.feature_gates = dra_gates(cp)
    scenario.server_version = cp.api().get("/version")["gitVersion"]
    return SimCluster(scenario, workloads=False)


@dataclass
class CorpusRun:
    """The control plane's DRA gates, and what each case got from the real API server and the simulated twin."""

    gates: dict[str, bool]
    outcomes: dict[str, tuple[Outcome, Outcome]]


def run_both(cp, cases: list[Case]) -> CorpusRun:
    """Each case applied, in order, to the real API server and to its simulated twin; what each did."""
    kube, sim = KubeCluster(kubeconfig=str(cp.kubeconfig)), simulated_twin(cp)
    api = cp.api()
    try:
        for cluster in (kube, sim):
            cluster.apply(NAMESPACES)
        for ns in NAMESPACES:  # the ServiceAccount admission plugin needs it before a pod is accepted
            name = ns["metadata"]["name"]
            wait_for(lambda: api.get_or_none(path_for("ServiceAccount", "default", name)), what=f"default SA in {name}")
        return CorpusRun(dra_gates(cp), {case.name: (run_case(kube, case), run_case(sim, case)) for case in cases})
    finally:
        clean_up(kube)
        kube.close()


def clean_up(kube: KubeCluster) -> None:
    """Delete what the corpus created (a session's control plane is shared with other modules)."""
    for kind in ("ResourceSlice", "DeviceClass", "PriorityClass", "Namespace"):
        for obj in kube.list(kind):
            name = obj["metadata"]["name"]
            if name.startswith("corpus") and (obj["metadata"].get("labels") or {}).get(MANAGED_BY_LABEL) == "drawb":
                kube.delete(kind, name)


def check_agreement(run: CorpusRun, case: Case) -> None:
    """The real server gave the recorded answer for its version and gates, and the simulated cluster did exactly
    the same."""
    real, sim = run.outcomes[case.name]
    expected = case.expected(RULES, run.gates)
    assert real.verdict == expected, f"{case.why}: the real server said {real.error or 'accept'}"
    assert outcome_differences(case, real, sim) == []
