"""The Job contract against the local control plane: the real job controller, resourceclaim controller and
scheduler; kwok nodes (whose pod-complete stage ends a Job's pods as Succeeded: tests/contract/jobs.py)."""

from __future__ import annotations

import pytest

from tests.contract.jobs import CASES

pytestmark = [pytest.mark.live, pytest.mark.every_version]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_control_plane_runs_jobs(case, kube, namespace):
    case(kube, namespace)
