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
