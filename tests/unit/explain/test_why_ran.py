"""``why`` on pods that run or ran: where, with which devices, and what became of their claims.

The pods run on the simulated cluster's nodes (ManualClock: time moves when the test says). The same
answers against the real control plane: tests/contract/lifecycle.py, run by tests/live.
"""

from __future__ import annotations

import copy

from drawb.explain import result as r
from tests.unit.explain.conftest import H200, PRODUCT, claim, exactly, pod

H200_ONLY = (f"{PRODUCT} == 'NVIDIA H200'",)


def _running(name: str, *claims: str, command: tuple[str, ...] = ("sleep", "infinity"), **spec) -> dict:
    made = pod(name, *claims, **spec)
    made["spec"]["containers"][0]["command"] = list(command)
    made["spec"]["restartPolicy"] = "Never"
    return made


def test_a_starting_then_running_pod_says_where_and_with_which_devices(sim):
    sim.apply(claim("c", exactly("gpu", selectors=H200_ONLY)), _running("p", "c"))
    why = sim.why("p")
    assert why.state == r.ALLOCATED
    assert why.summary == (f"the pod is bound to node {H200} and starting, its claims allocated and reserved for it: "
                           "container main waiting: ContainerCreating")
    assert why.scheduler == f"Successfully assigned default/p to {H200}"
    sim.cluster.sleep(1)
    why = sim.why("p")
    assert why.summary.startswith(f"the pod runs on node {H200} (Running since 2026-01-01T00:00:00Z), its claims "
                                  "allocated and reserved for it: container main running since 2026-01-01T00:00:00Z")
    [device] = why.devices
    assert (device.request, device.node, device.attributes["productName"]) == ("c/gpu", H200, "NVIDIA H200")


def test_an_ended_pod_whose_template_claim_went_waits_for_nothing(sim):
    sim.apply(_running("once", templates={"gpu": "single-gpu"}, command=("nvidia-smi", "-L"), ns="gpu-demo"))
    made = sim.cluster.get("Pod", "once", "gpu-demo")["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    sim.cluster.sleep(5)
    why = sim.why("once", "gpu-demo")
    assert why.state == r.ENDED and why.devices == [] and why.remedies == []
    assert why.summary == ("the pod ran on node a100-sxm-node-01 and succeeded: container main exited with code 0 "
                           "(Completed) at 2026-01-01T00:00:01Z; it has ended, so it waits for nothing and holds no device")
    assert why.notes[0] == (f"claim {made} (made from template single-gpu for this pod) was deleted by the "
                            "resourceclaim controller when the pod ended: its devices are free")
    assert why.notes[1].startswith("which devices it had is no longer recorded")


def test_an_ended_pods_own_claim_is_deallocated_and_kept_and_a_shared_one_stays_with_the_others(sim):
    sim.apply(claim("mine", exactly("gpu")), claim("shared", exactly("gpu", selectors=H200_ONLY)),
              _running("done", "mine", "shared", command=("nvidia-smi", "-L")), _running("keeper", "shared"))
    sim.cluster.sleep(5)
    why = sim.why("done")
    assert why.state == r.ENDED
    assert "claim mine was deallocated when the pod ended (its devices are free), and kept: it was created on its " \
           "own, not for this pod" in why.notes
    assert "claim shared stays allocated, reserved for pod(s) keeper: it is shared, its devices are theirs now" in why.notes
    assert {"ResourceClaim default/mine", "ResourceClaim default/shared"} <= set(why.cited)


def test_a_failed_pod_and_the_devices_its_status_still_names(sim):
    from drawb.plan.read import read_view
    from drawb.testing.views import changed_view
    from drawb.explain import explain

    blind = _running("blind", templates={"gpu": "single-gpu"}, command=("nvidia-smi",), ns="gpu-demo")
    blind["spec"]["containers"][0]["resources"] = {}  # the container asks for no claim: it sees no GPU
    sim.apply(blind)
    sim.cluster.sleep(5)
    state = read_view(sim.session.cluster, sim.session.rules_version, explaining=True)
    why = explain(state, "Pod", "gpu-demo", "blind")
    assert why.summary.startswith("the pod ran on node a100-sxm-node-01 and failed: container main exited with code 6 "
                                  "(Error) at ")
    # from 1.36 (ResourceHealthStatus) the kubelet keeps the devices in the pod's status
    pods = [copy.deepcopy(p) for p in state.pods]
    ended = next(p for p in pods if p["metadata"]["name"] == "blind")
    ended["status"]["containerStatuses"][0]["allocatedResourcesStatus"] = [{
        "name": "claim:blind-gpu-abcde/gpu",
        "resources": [{"resourceID": "gpu.nvidia.com/a100-sxm-node-01/gpu-0", "health": "Healthy"}]}]
    why = explain(changed_view(state, pods=pods), "Pod", "gpu-demo", "blind")
    [device] = why.devices
    assert (device.request, device.device, device.node) == ("blind-gpu-abcde/gpu", "a100-sxm-node-01/gpu-0",
                                                            "a100-sxm-node-01")
    assert device.attributes["productName"] == "NVIDIA A100-SXM4-40GB"
    assert not any(n.startswith("which devices it had") for n in why.notes)


def test_a_bound_pod_whose_claim_is_gone_is_not_told_to_wait(sim):
    from drawb.plan.read import read_view
    from drawb.testing.views import changed_view
    from drawb.explain import explain

    sim.apply(claim("c", exactly("gpu")), _running("p", "c"))
    state = read_view(sim.session.cluster, sim.session.rules_version, explaining=True)
    state = changed_view(state, claims=[c for c in state.claims if c["metadata"]["name"] != "c"])
    why = explain(state, "Pod", "default", "p")
    assert why.state == r.CLAIM_MISSING and why.remedies == []
    assert "which no longer exists in namespace default" in why.summary and "waits" not in why.summary
