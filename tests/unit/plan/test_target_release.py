"""``why`` and ``preview`` judge with the connected cluster's release, patch included: a v1.36.3 server
gets the allocator of v1.36.3, a bare minor the newest patch drawb knows."""

from __future__ import annotations

import pytest

from drawb import versions
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.plan.read import read_view
from drawb.plan.target import scheduler_target
from drawb.session import Session


def _session(version: str) -> Session:
    return Session(_cluster=SimCluster("synthetic:2x2", workloads=False, clock=ManualClock(),
                                       kubernetes_version=version))


@pytest.mark.parametrize(("version", "release"), [("v1.36.3", "v1.36.3"), ("1.36", versions.rules("1.36").version),
                                                  ("v1.35.9", "v1.35.9")])
def test_why_and_preview_read_the_servers_patch(version, release):
    session = _session(version)
    assert scheduler_target(session.cluster, session.rules_version).kubernetes_version == release
    assert read_view(session.cluster, session.rules_version, explaining=True).kubernetes_version == release
    state = read_view(session.cluster, session.rules_version)
    assert state.kubernetes_version == release and f"Kubernetes {release}" in state.where
    assert session.cluster.lifecycle.kubernetes_version == release  # the simulated scheduler's allocator too


def test_a_newer_server_is_judged_by_the_newest_release_drawb_knows():
    with pytest.warns(versions.NewerKubernetesVersion):
        session = _session("v1.38.1")
    target = scheduler_target(session.cluster, session.rules_version)
    assert (target.kubernetes_version, target.newer_than_known) == (versions.rules(versions.newest()).version, "1.38")
