"""The lifecycle contract against the simulated cluster (on a manual clock: instant, exact)."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from tests.contract.lifecycle import CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_sim_cluster_runs_the_lifecycle_like_the_control_plane(case):
    cluster = SimCluster(workloads=False, clock=ManualClock())
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lifecycle"}}])
    case(cluster, "lifecycle")
