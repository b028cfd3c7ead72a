"""The Job contract against the simulated cluster (on a manual clock: instant, exact), at the oldest and newest minor."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from tests.contract.jobs import CASES, SIMULATED_CASES


@pytest.mark.parametrize("version", ["1.34", "1.37"])
@pytest.mark.parametrize("case", CASES + SIMULATED_CASES, ids=lambda c: c.__name__)
def test_sim_cluster_runs_jobs_like_the_control_plane(case, version):
    cluster = SimCluster(workloads=False, clock=ManualClock(), kubernetes_version=version)
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "jobs"}}])
    case(cluster, "jobs")
