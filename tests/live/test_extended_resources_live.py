"""Legacy extended-resource pods (``nvidia.com/gpu: 1`` in limits) with DRAExtendedResource off (its default at
1.34 and 1.35; a cluster of its own with it off at 1.36; at 1.37 it is locked on, and these tests are skipped
there, named: ``test_extended_resource_dra_live.py`` covers that version): the real scheduler and the simulated one
agree on the pod's phase, its FailedScheduling message where no
node advertises the resource, and its node where only one node does (a kwok node whose allocatable lists
``nvidia.com/gpu``, as a device plugin would make it).
"""

from __future__ import annotations

import pytest

from drawb import versions
from drawb.cluster.sim.cluster import SimCluster
from drawb.testing.api import path_for
from drawb.testing.build import target_k8s_version
from drawb.testing.waiting import wait_for
from tests.live.planes import plane_with_gate

pytestmark = pytest.mark.live

PLUGIN_NODE = "device-plugin-node"
GATE = "DRAExtendedResource"
OFF = {GATE: False}


def legacy_pod(name: str, namespace: str, gpus: int = 1, **more: str) -> dict:
    limits = {"nvidia.com/gpu": str(gpus), **{k.replace("_", "/"): v for k, v in more.items()}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "ctr", "image": "ubuntu:24.04", "command": ["sleep", "infinity"],
                                     "resources": {"limits": limits}}]}}


def plugin_node(gpus: int) -> dict:
    sizes = {"cpu": "8", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": PLUGIN_NODE, "labels": {"kubernetes.io/hostname": PLUGIN_NODE}},
            "status": {"allocatable": dict(sizes), "capacity": dict(sizes)}}


def _unschedulable(api, namespace: str, name: str) -> dict | None:
    pod = api.get(path_for("Pod", name, namespace))
    for cond in pod.get("status", {}).get("conditions") or ():
        if cond["type"] == "PodScheduled" and cond["status"] == "False" and cond.get("message"):
            return pod
    return None


def simulated_cluster() -> SimCluster:
    """The simulated cluster of the control plane's version, with the gate off."""
    return SimCluster("default", kubernetes_version=target_k8s_version(), feature_gates=OFF)


def _simulated(objects: list[dict], name: str, namespace: str) -> dict:
    sim = simulated_cluster()
    sim.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, *objects])
    sim.sleep(1)
    return sim.get("Pod", name, namespace)


def _condition(pod: dict) -> dict:
    return next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")


@pytest.fixture(scope="module")
def control_plane(control_plane, start_control_plane):
    """The session's control plane if the gate is off there, else one started with it off (conftest's
    ``namespace`` makes the tests' namespaces there)."""
    if control_plane.feature_enabled(GATE) and versions.rules(target_k8s_version()).gates[GATE].locked:
        pytest.skip(f"{GATE} is locked on at {target_k8s_version()}: a legacy pod takes the DRA road there "
                    "(test_extended_resource_dra_live.py)")
    with plane_with_gate(control_plane, start_control_plane, GATE, False) as cp:
        yield cp


def test_no_node_offers_the_resource(control_plane, namespace):
    api = control_plane.api()
    nodes = api.get(path_for("Node"))["items"]
    assert not any("nvidia.com/gpu" in (n.get("status", {}).get("allocatable") or {}) for n in nodes)
    pod = legacy_pod("legacy-gpu", namespace)
    api.create(pod)
    real = wait_for(lambda: _unschedulable(api, namespace, "legacy-gpu"), timeout=60, what="FailedScheduling")
    simulated = _simulated([pod], "legacy-gpu", namespace)
    assert real["status"]["phase"] == simulated["status"]["phase"] == "Pending"
    assert not simulated["spec"].get("nodeName")
    assert _condition(real)["message"].startswith(f"0/{len(nodes)} nodes are available: {len(nodes)} Insufficient "
                                                  "nvidia.com/gpu.")
    assert _condition(simulated)["message"] == _condition(real)["message"]
    assert _condition(simulated)["reason"] == _condition(real)["reason"] == "Unschedulable"


def test_every_short_resource_is_counted(control_plane, namespace):
    api = control_plane.api()
    pod = legacy_pod("two-short", namespace, **{"example.com_fpga": "1"})
    api.create(pod)
    real = wait_for(lambda: _unschedulable(api, namespace, "two-short"), timeout=60, what="FailedScheduling")
    message = _condition(real)["message"]
    assert "Insufficient example.com/fpga, " in message and "Insufficient nvidia.com/gpu." in message
    assert _condition(_simulated([pod], "two-short", namespace))["message"] == message


def test_only_the_plugin_node_takes_the_pod(control_plane, namespace):
    api = control_plane.api()
    try:
        api.create(plugin_node(gpus=1))
        first, second = legacy_pod("legacy-a", namespace), legacy_pod("legacy-b", namespace)
        api.create(first)
        bound = wait_for(lambda: api.get(path_for("Pod", "legacy-a", namespace))["spec"].get("nodeName"),
                         timeout=60, what="legacy-a bound")
        sim_first = _simulated([plugin_node(gpus=1), first], "legacy-a", namespace)
        assert bound == sim_first["spec"]["nodeName"] == PLUGIN_NODE
        # the node's one GPU is taken: the second pod waits, in the same words on both
        api.create(second)
        real = wait_for(lambda: _unschedulable(api, namespace, "legacy-b"), timeout=60, what="legacy-b FailedScheduling")
        sim = simulated_cluster()
        sim.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, plugin_node(gpus=1), first])
        sim.sleep(0.2)
        sim.apply([second])
        sim.sleep(0.2)
        simulated = sim.get("Pod", "legacy-b", namespace)
        assert simulated["status"]["phase"] == real["status"]["phase"] == "Pending"
        assert _condition(simulated)["message"] == _condition(real)["message"]
        assert "No preemption victims found for incoming pod" in _condition(real)["message"]
    finally:
        api.delete(path_for("Pod", "legacy-a", namespace))
        api.delete(path_for("Pod", "legacy-b", namespace))
        api.delete(path_for("Node", PLUGIN_NODE))
