"""The lifecycle contract against the simulated cluster (on a manual clock: instant, exact), at the default
version and at 1.37 (whose scheduler words some messages differently)."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from tests.contract.lifecycle import CASES


@pytest.mark.parametrize("version", [None, "1.37"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_sim_cluster_runs_the_lifecycle_like_the_control_plane(case, version):
    cluster = SimCluster(workloads=False, clock=ManualClock(), kubernetes_version=version)
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lifecycle"}}])
    case(cluster, "lifecycle")
