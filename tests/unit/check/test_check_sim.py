"""The check contract (tests/contract/check.py) on the simulated cluster, on a manual clock."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from tests.contract import check as cases


@pytest.fixture
def sim():
    return SimCluster(clock=ManualClock())


def no_faults(name):
    pytest.skip("the simulated cluster's nodes never show the wrong devices (fault injection is the fake driver's)")


SIM_CASES = [c for c in cases.PASSING + cases.STOPPING]


@pytest.mark.parametrize("case", SIM_CASES, ids=lambda c: c.__name__)
def test_check_on_the_simulated_cluster(case, sim):
    case(sim, "default", no_faults)


@pytest.mark.parametrize("where", cases.INTERRUPT_AT, ids=["before-allocation", "while-pending", "while-streaming"])
def test_interrupted_check_leaves_nothing_on_the_simulated_cluster(sim, where):
    cases.interrupted_at_each_stage_leaves_nothing(sim, "default", no_faults, where)


def test_existing_claim_on_the_simulated_cluster(sim):
    sim.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "user-claim", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}])
    cases.an_existing_claim_is_checked_and_kept(sim, "default", no_faults)


def test_a_pod_that_ends_before_the_first_poll_still_passes(sim):
    """On a loaded machine the pod can run, end, and have its claim released and deleted before the
    check reads the claim; the watch saw the allocation, so the verdict is still PASS (not MISMATCH)."""
    from drawb.check import build_objects
    from drawb.check.run import run_check

    def progress(line: str) -> None:
        if "] applied" in line:
            sim.lifecycle.clock.sleep(60)  # everything happens before the first poll

    objects = build_objects(sim, namespace="default", template="single-gpu")
    verdict = run_check(sim, objects, payload="list", interval=1, timeout=600, progress=progress)
    assert verdict.status == "PASS", verdict.reason
    assert len(verdict.expected) == 1 and verdict.expected[0].uuid.startswith("GPU-")
