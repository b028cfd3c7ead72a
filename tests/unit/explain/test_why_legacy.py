"""``why`` on a pod that asks for ``nvidia.com/gpu`` in its limits and uses no ResourceClaim: the simulated
scheduler's verdict explained (what it asks for, which nodes offer it, the DeviceClass mapping, the gate,
the fix)."""

from __future__ import annotations

from drawb.explain import result as r

LEGACY = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "legacy-gpu", "namespace": "default"},
          "spec": {"restartPolicy": "Never",
                   "containers": [{"name": "c", "image": "ubuntu", "command": ["sleep", "infinity"],
                                   "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}


def _offer(gpus: int, node: str = "hgx-h200-03"):
    def edit(scenario):
        for n in scenario.nodes:
            if n["metadata"]["name"] == node:
                n["status"]["allocatable"]["nvidia.com/gpu"] = str(gpus)
    return edit


def test_pending_legacy_pod_is_explained(sim):
    sim.apply(LEGACY)
    sim.cluster.sleep(1)
    out = sim.why("pod/legacy-gpu")
    assert out.state == r.PENDING and out.stage == "node"
    assert "asks for nvidia.com/gpu: 1" in out.summary and "Insufficient" in out.summary
    assert out.scheduler.startswith("Unschedulable: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.")
    assert out.excluded["a100-sxm-node-01"] == ("the pod asks for nvidia.com/gpu: 1; the node offers 0 "
                                                "(no device plugin advertises nvidia.com/gpu on it)")
    assert any("no node lists it in its allocatable" in n for n in out.notes)
    assert "no DeviceClass maps nvidia.com/gpu (spec.extendedResourceName)" in out.notes
    assert "DRAExtendedResource is off (Kubernetes 1.34: alpha, off by default)" in out.notes
    assert [m.kind for m in out.remedies] == ["migrate", "wait"]


def test_running_legacy_pod_and_the_free_count(make_sim):
    sim = make_sim(edit=_offer(2))
    sim.apply(LEGACY)
    sim.cluster.sleep(1)
    out = sim.why("pod/legacy-gpu")
    assert out.state == r.ALLOCATED and "runs on node hgx-h200-03" in out.summary
    assert "the node's device plugin serves it" in out.summary
    assert "nvidia.com/gpu: the pod asks for 1; offered by hgx-h200-03 (allocatable 2, free 1)" in out.notes


def test_gate_on_and_a_class_mapping_it_are_named(make_sim):
    sim = make_sim(gates={"DRAExtendedResource": True})  # the driver's gpu.nvidia.com class maps nvidia.com/gpu
    sim.apply(LEGACY)
    sim.cluster.sleep(1)
    out = sim.why("pod/legacy-gpu")
    assert "DRAExtendedResource is on (Kubernetes 1.34: alpha, off by default)" in out.notes
    assert any(n.startswith("DeviceClass gpu.nvidia.com maps nvidia.com/gpu (extendedResourceName), so the scheduler "
                            "serves it through DRA") for n in out.notes)
    assert out.state == r.ALLOCATED and "runs on node a100-sxm-node-01" in out.summary
    claim = sim.cluster.get("Pod", "legacy-gpu", "default")["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
    assert (f"the scheduler serves it through DRA (DRAExtendedResource): the node does not offer it, so it made "
            f"ResourceClaim {claim} for the pod (container c: nvidia.com/gpu -> request container-0-request-0), "
            "allocated gpu-0 (container-0-request-0)") in out.summary


def test_devices_short_on_the_dra_road(make_sim):
    sim = make_sim(gates={"DRAExtendedResource": True})
    pod = {**LEGACY, "spec": {**LEGACY["spec"], "containers": [
        {**LEGACY["spec"]["containers"][0], "resources": {"limits": {"nvidia.com/gpu": "9"}}}]}}
    sim.apply(pod)
    sim.cluster.sleep(1)
    out = sim.why("pod/legacy-gpu")
    assert out.state == r.PENDING and "cannot allocate all claims" in out.summary
    assert out.excluded["a100-sxm-node-01"] == ("cannot allocate all claims: the claim the scheduler would make asks "
                                                "for 9 of DeviceClass gpu.nvidia.com, more than the node has free")
    assert [m.kind for m in out.remedies] == ["wait"]


def test_an_ended_pod_on_the_dra_road_names_its_claim(make_sim):
    sim = make_sim(gates={"DRAExtendedResource": True})
    pod = {**LEGACY, "spec": {**LEGACY["spec"], "containers": [{**LEGACY["spec"]["containers"][0], "command": ["true"]}]}}
    sim.apply(pod)
    sim.cluster.sleep(30)
    claim = sim.cluster.get("Pod", "legacy-gpu", "default")["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
    out = sim.why("pod/legacy-gpu")
    # 1.34's resourceclaim controller leaves the claim of an ended pod in place
    assert out.state == r.ENDED and out.summary.endswith(
        f"it asked for nvidia.com/gpu: 1 through DRA: the scheduler made ResourceClaim {claim} for it")


def test_a_pod_bound_without_devices_on_1_34(make_sim):
    sim = make_sim(gates={"DRAExtendedResource": True})
    pod = {**LEGACY, "spec": {**LEGACY["spec"], "containers": [{**LEGACY["spec"]["containers"][0], "resources": {
        "limits": {"deviceclass.resource.kubernetes.io/gpu.nvidia.com": "1"}}}]}}
    sim.apply(pod)
    sim.cluster.sleep(1)
    out = sim.why("pod/legacy-gpu")
    assert out.state == r.ALLOCATED and ("neither the node's device plugin nor DRA serves "
                                         "deviceclass.resource.kubernetes.io/gpu.nvidia.com") in out.summary
