"""The shared corpus through the real API server and the simulated cluster with every DRA gate off that the
version lets be turned off (beta ones too, and the gates that depend on them), on a control plane of its own;
see test_corpus_live.py."""

from __future__ import annotations

import pytest

from drawb import versions
from drawb.testing import build
from tests.contract.corpus import load_corpus
from tests.live.corpus_run import check_agreement, run_both

# the gates whose fields the API server of the live tier's version drops
DRA_GATES = versions.rules(build.target_k8s_version()).field_gates


pytestmark = [pytest.mark.live, pytest.mark.every_version]

CASES = load_corpus()


@pytest.fixture(scope="module")
def gates_off(start_control_plane):
    cp = start_control_plane(dict.fromkeys(DRA_GATES, False))
    try:
        assert not any(cp.feature_enabled(g) for g in DRA_GATES)
        yield run_both(cp, CASES)
    finally:
        cp.cluster.down()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_all_gates_off_agree(gates_off, case):
    check_agreement(gates_off, case)
