"""Run the shared corpus through a control plane's API server and a simulated cluster of its version and gates."""

from __future__ import annotations

from drawb import versions
from drawb.cluster.kube import KubeCluster
from drawb.cluster.protocol import MANAGED_BY_LABEL
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios import build_scenario
from drawb.testing import build
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.contract.corpus import NAMESPACES, Case, Outcome, outcome_differences, run_case

# the gates whose fields the API server of the live tier's version drops
DRA_GATES = versions.rules(build.target_k8s_version()).field_gates


def simulated_twin(cp) -> SimCluster:
    """A simulated cluster with the control plane's version and DRA gates."""
    scenario = build_scenario("default")
    scenario.feature_gates = {g: cp.feature_enabled(g) for g in DRA_GATES}
    scenario.server_version = cp.api().get("/version")["gitVersion"]
    return SimCluster(scenario, workloads=False)


def run_both(cp, cases: list[Case]) -> dict[str, tuple[Outcome, Outcome]]:
    """Each case applied, in order, to the real API server and to its simulated twin; what each did."""
    kube, sim = KubeCluster(kubeconfig=str(cp.kubeconfig)), simulated_twin(cp)
    api = cp.api()
    try:
        for cluster in (kube, sim):
            cluster.apply(NAMESPACES)
        for ns in NAMESPACES:  # the ServiceAccount admission plugin needs it before a pod is accepted
            name = ns["metadata"]["name"]
            wait_for(lambda: api.get_or_none(path_for("ServiceAccount", "default", name)), what=f"default SA in {name}")
        return {case.name: (run_case(kube, case), run_case(sim, case)) for case in cases}
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


def check_agreement(results: dict[str, tuple[Outcome, Outcome]], case: Case, gate_set: str) -> None:
    """The real server gave the recorded answer, and the simulated cluster did exactly the same."""
    real, sim = results[case.name]
    assert real.verdict == case.expected(gate_set), f"{case.why}: the real server said {real.error or 'accept'}"
    assert outcome_differences(case, real, sim) == []
