"""The shared corpus (tests/data/corpus) through the real API server and the simulated cluster: the defaults
of the live tier's version (the session's control plane) and every DRA gate on (a second one; with the gates
outside DRA they depend on, ``drawb.versions.Rules.with_dependencies``).

Both clusters get the same version and gates; each corpus file is applied to both, in order, and the
two must agree: the same accept or reject, and the same stored objects under the comparison rule of
tests/contract/corpus.py. test_corpus_gates_off_live.py does the same with every DRA gate off.
"""

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
def default_gates(control_plane):
    return run_both(control_plane, CASES)


@pytest.fixture(scope="module")
def gates_on(start_control_plane):
    cp = start_control_plane(dict.fromkeys(DRA_GATES, True))
    try:
        assert all(cp.feature_enabled(g) for g in DRA_GATES)
        yield run_both(cp, CASES)
    finally:
        cp.cluster.down()


def test_the_corpus_is_large_and_covers_both_answers():
    assert len(CASES) >= 40
    rules = versions.rules(build.target_k8s_version())
    verdicts = [c.expected(rules, {}) for c in CASES]
    assert verdicts.count("accept") >= 15 and verdicts.count("reject") >= 15
    kinds = {d["kind"] for c in CASES for d in c.documents}
    assert {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "Pod", "Namespace",
            "ConfigMap", "PriorityClass", "Deployment", "Service"} <= kinds


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_default_gates_agree(default_gates, case):
    check_agreement(default_gates, case)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_all_gates_on_agree(gates_on, case):
    check_agreement(gates_on, case)
