"""The lifecycle contract against the local control plane: the real API server, scheduler and
controller manager, kwok nodes and the fake driver as the node agent."""

from __future__ import annotations

import pytest

from tests.contract.lifecycle import CASES

pytestmark = pytest.mark.live


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_control_plane_runs_the_lifecycle(case, kube, namespace):
    case(kube, namespace)
