"""The Cluster protocol contract against the simulated cluster."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.cluster import SimCluster
from tests.contract.cases import CASES


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_sim_cluster_honours_the_contract(case):
    cluster = SimCluster()
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "contract"}}])
    case(cluster, "contract")
