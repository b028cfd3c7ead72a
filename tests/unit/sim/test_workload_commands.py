"""``logs`` and ``events`` through the shared command registry, on the simulated cluster."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.commands.registry import run_line
from drawb.commands.workloads import PodNotFound
from drawb.session import Session

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}


def _pod(name: str, count_class: str = "one") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"restartPolicy": "Never", "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": count_class}],
                     "containers": [{"name": "c", "image": "cuda", "command": ["nvidia-smi", "-L"],
                                     "resources": {"claims": [{"name": "gpu"}]}}]}}


@pytest.fixture
def session():
    cluster = SimCluster(workloads=False, clock=ManualClock())
    cluster.apply([TEMPLATE, _pod("check")])
    return Session(_cluster=cluster)


def test_logs_wait_for_the_container_and_say_the_node_is_simulated(session):
    log = run_line(session, "logs check --follow")
    assert log.lines[0].startswith("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-")
    assert str(log).splitlines()[0] == "# printed by a node of the simulated cluster 'default'"
    assert session.cluster.get("Pod", "check", "default")["status"]["phase"] == "Succeeded"


def test_logs_of_a_missing_pod_is_a_named_error(session):
    with pytest.raises(PodNotFound, match="no pod 'nope' in namespace 'default'"):
        run_line(session, "logs nope")


def test_events_of_one_pod(session):
    frame = run_line(session, "events check")
    assert frame[["type", "reason", "object"]].values.tolist() == [["Normal", "Scheduled", "pod/check"],
                                                                    ["Normal", "Pulling", "pod/check"]]
    assert frame["source"].tolist() == ["default-scheduler-simulated", "a100-sxm-node-01-simulated"]


def test_logs_of_a_pod_of_several_containers_names_them_at_once(session):
    from drawb.commands.workloads import ContainerNotChosen

    duo = _pod("duo")
    duo["spec"]["containers"].append({**duo["spec"]["containers"][0], "name": "d"})
    duo["spec"]["initContainers"] = [{"name": "setup", "image": "cuda", "command": ["true"]}]
    session.cluster.apply([duo])
    before = session.cluster.lifecycle.clock.now()
    with pytest.raises(ContainerNotChosen, match=r"^a container name must be specified for pod duo, choose one of: "
                                                 r"\[c d\] or one of the init containers: \[setup\]$") as err:
        run_line(session, "logs duo")
    assert err.value.render("drawb").endswith("Hint: `drawb logs duo -c c`")
    with pytest.raises(ContainerNotChosen, match="^container e is not valid for pod duo$"):
        run_line(session, "logs duo -c e")
    assert session.cluster.lifecycle.clock.now() == before  # answered without waiting
    assert run_line(session, "logs duo -c d --follow").lines[0].startswith("GPU 0: NVIDIA ")


def test_logs_of_a_pod_that_never_starts_is_a_named_error_after_the_timeout(session):
    from drawb.commands.workloads import PodNotStarted

    stuck = _pod("stuck")
    stuck["spec"]["nodeName"] = "hgx-h200-03"  # bound by hand: its claim is never allocated, the node never starts it
    session.cluster.apply([stuck])
    with pytest.raises(PodNotStarted, match=r"^container c of pod stuck did not start within 30 s "
                                            r"\(waiting: ContainerCreating\)$") as err:
        run_line(session, "logs stuck --timeout 30")
    assert "`drawb why stuck -n default`" in err.value.render("drawb")
