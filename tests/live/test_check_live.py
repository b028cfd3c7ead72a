"""``drawb.check`` on the local control plane: the real scheduler allocates, the fake driver prints nvidia-smi."""

from __future__ import annotations

import pytest

from drawb.check import PASS, check
from drawb.testing.api import ApiError, path_for
from drawb.testing.fake_driver import FAULTS_CONFIGMAP
from tests.contract import check as cases

pytestmark = pytest.mark.live


@pytest.fixture
def faults(control_plane, namespace):
    """Tell the fake driver what this namespace's pods see (a ConfigMap it reads)."""
    api = control_plane.api()

    def set_fault(name: str | None) -> None:
        if name is None:
            api.delete(path_for("ConfigMap", FAULTS_CONFIGMAP, namespace))
            return
        api.apply({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": FAULTS_CONFIGMAP, "namespace": namespace},
                   "data": {"nvidia-smi": name}}, "drawb-tests")

    return set_fault


@pytest.mark.parametrize("case", cases.PASSING + cases.FAULTY + cases.STOPPING, ids=lambda c: c.__name__)
def test_check(case, kube, namespace, faults):
    case(kube, namespace, faults)


@pytest.mark.parametrize("where", cases.INTERRUPT_AT, ids=["before-allocation", "while-pending", "while-streaming"])
def test_interrupted_check_leaves_nothing(kube, namespace, faults, where):
    cases.interrupted_at_each_stage_leaves_nothing(kube, namespace, faults, where)


def test_two_checks_at_once_in_one_namespace(kube, namespace, faults):
    cases.two_checks_at_once_do_not_collide(kube, namespace, faults)


def test_existing_user_claim_is_checked_and_left_alone(kube, control_plane, namespace, faults):
    api = control_plane.api()
    api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "user-claim", "namespace": namespace},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}})
    cases.an_existing_claim_is_checked_and_kept(kube, namespace, faults)


def test_check_pod_is_admitted_under_restricted_pod_security(kube, control_plane):
    api = control_plane.api()
    name = control_plane.create_namespace("restricted")
    try:
        api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {
            "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}},
            "drawb-tests")
        bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": name},
                "spec": {"containers": [{"name": "c", "image": "ubuntu:24.04"}]}}
        with pytest.raises(ApiError, match="violates PodSecurity \"restricted:latest\""):
            api.create(bare)  # the namespace does enforce the standard
        verdict = check(kube, namespace=name, template="single-gpu", timeout=60)
        assert verdict.status == PASS, verdict
        cases.assert_nothing_left(kube, name)
    finally:
        api.delete(path_for("Namespace", name))


def test_the_notebook_check_runner_follows_a_check_on_the_real_cluster(control_plane, namespace, shell):
    """``%dra check`` in a real IPython shell connected to the real control plane: the same widget, no simulated label."""
    shell.run(f"%dra connect --kubeconfig {control_plane.kubeconfig}")
    runner = shell.run(f"%dra check single-gpu -n {namespace}")
    assert runner.passed, runner
    assert runner.source == ""  # a real cluster's verdict is not labelled simulated
    stages = [stage for _, stage, _ in runner.stages]
    assert {"allocated", "reserved", "scheduled", "running", "exited"} <= set(stages) and stages[-1] == "verdict"
    [line] = runner.log_text.splitlines()
    assert line.startswith("GPU 0: NVIDIA ") and runner.verdict.expected[0].uuid in line
    assert runner.verdict.cluster != "" and "simulated" not in runner.verdict.cluster
