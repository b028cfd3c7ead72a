"""``why`` on hand-built situations of the simulated cluster: every stage of the funnel emptied once,
the near misses, the states that are not allocation failures, allocated claims; each asserting the
stage named and the objects cited."""

from __future__ import annotations

import copy

import pytest

from drawb.explain import result as r
from tests.unit.explain.conftest import A100, H100, H200, L4, PRODUCT, claim, exactly, pod

HOSTNAME = "kubernetes.io/hostname"


def _with_pod_changed(state, name, change):
    """``state`` with a changed copy of pod ``name`` (the simulated cluster's objects are read-only)."""
    from drawb.testing.views import changed_view

    pods = [copy.deepcopy(p) if p["metadata"]["name"] == name else p for p in state.pods]
    change(next(p for p in pods if p["metadata"]["name"] == name))
    return changed_view(state, pods=pods)


def _remedy(explanation, kind):
    found = [x for x in explanation.remedies if x.kind == kind]
    assert found, (kind, explanation.remedies, str(explanation))
    return found[0]


# --- every stage of the funnel, emptied once ----------------------------------------------------


def test_published_stage_an_invalid_pool_stops_the_scheduler(make_sim):
    def edit(scenario):
        rs = next(s for s in scenario.resource_slices
                  if s["spec"].get("nodeName") == H200 and s["spec"]["driver"] == "gpu.nvidia.com")
        second = copy.deepcopy(rs)
        second["metadata"]["name"] += "-second"
        second["spec"]["devices"] = second["spec"]["devices"][1:2]  # gpu-1 again: a duplicate device name
        rs["spec"]["pool"]["resourceSliceCount"] = second["spec"]["pool"]["resourceSliceCount"] = 2
        scenario.resource_slices.append(second)
    sim = make_sim(edit=edit)
    sim.apply(claim("one", exactly("gpu", selectors=(f"{PRODUCT} == 'NVIDIA H200'",))), pod("p", "one"))
    why = sim.why("p")
    assert why.state == r.PENDING and why.stage == "published"
    assert "duplicate device name gpu-1" in why.summary and why.scheduler.startswith("SchedulerError")


def test_class_stage_empties_when_no_node_has_that_many(sim):
    sim.apply(claim("nine", exactly("gpus", count=9)), pod("p9", "nine"))
    why = sim.why("p9")
    assert (why.state, why.stage) == (r.PENDING, "class")
    assert _remedy(why, "lower-count").count == 8
    assert "cannot allocate all claims" in why.scheduler


def test_class_selectors_drop_devices_of_other_kinds(sim):
    sim.apply(claim("migs", exactly("m", cls="mig.nvidia.com")), pod("pm", "migs", nodeSelector={HOSTNAME: L4}))
    why = sim.why("pm")
    assert (why.stage, why.local_stage) == ("node", "class")  # an L4 has no MIG devices
    counts = {s.stage: s.devices for s in why.requests[0].stages}
    assert counts["class"] == 14 and counts["published"] > counts["class"]  # the MIG devices of dgx-h100-02


def test_request_selectors_empty(sim):
    sim.apply(claim("b200", exactly("gpu", selectors=(f"{PRODUCT} == 'NVIDIA B200'",))), pod("pb", "b200"))
    why = sim.why("pb")
    assert why.stage == "selectors"
    remedy = _remedy(why, "drop-selectors")
    assert (remedy.claim, remedy.request) == ("b200", "gpu")


def test_selector_error_aborts_the_scheduler_and_names_the_device(sim):
    sim.apply(claim("bad", exactly("gpu", selectors=("device.attributes['gpu.nvidia.com'].profile != ''",))),
              pod("pbad", "bad"))
    why = sim.why("pbad")
    assert why.stage == "selectors" and "aborts" in why.summary
    assert "no such key" in why.summary and "gpu-" in why.summary
    assert why.scheduler.startswith("SchedulerError")  # the simulated scheduler errors the same way
    assert why.requests[0].errors


def test_free_stage_names_the_claims_and_pods_holding_the_devices(sim):
    sim.apply(claim("h200s", exactly("gpus", count=8, selectors=(f"{PRODUCT} == 'NVIDIA H200'",))), pod("ph", "h200s"))
    why = sim.why("ph")
    assert why.stage == "free"
    free = _remedy(why, "free")
    assert free.claims == ["gpu-demo/trainer-gpu-x7k2p"]
    assert "pod(s) gpu-demo/trainer" in free.text
    stage = next(s for s in why.requests[0].stages if s.stage == "free")
    assert stage.dropped == 1 and "trainer-gpu-x7k2p" in stage.examples[0]


def _taint_h200(scenario):
    for rs in scenario.resource_slices:
        if rs["spec"].get("nodeName") == H200 and rs["spec"]["driver"] == "gpu.nvidia.com":
            for device in rs["spec"]["devices"][1:]:
                device["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "48", "effect": "NoSchedule"}]


def test_taints_stage_and_the_toleration_that_fits(make_sim):
    sim = make_sim(gates={"DRADeviceTaints": True}, edit=_taint_h200)
    h200 = (f"{PRODUCT} == 'NVIDIA H200'",)
    sim.apply(claim("t", exactly("gpus", count=2, selectors=h200)), pod("pt", "t"))
    why = sim.why("pt")
    assert why.stage == "taints"
    tolerate = _remedy(why, "tolerate")
    assert tolerate.tolerations == [{"key": "gpu.nvidia.com/xid", "operator": "Equal", "value": "48", "effect": "NoSchedule"}]
    # the near miss, proven: with the toleration the simulated scheduler allocates
    sim.apply(claim("t2", exactly("gpus", count=2, selectors=h200, tolerations=tolerate.tolerations)), pod("pt2", "t2"))
    assert sim.why("pt2").state == r.ALLOCATED


def test_device_taints_are_ignored_while_the_gate_is_off(make_sim):
    sim = make_sim(edit=_taint_h200)
    sim.apply(claim("t", exactly("gpus", count=2, selectors=(f"{PRODUCT} == 'NVIDIA H200'",))), pod("pt", "t"))
    assert sim.why("pt").state == r.ALLOCATED


def _partitionable(scenario):
    node = copy.deepcopy(next(n for n in scenario.nodes if n["metadata"]["name"] == H200))
    node["metadata"]["name"] = "part-node"
    node["metadata"]["labels"] = {**node["metadata"].get("labels", {}), HOSTNAME: "part-node"}
    scenario.nodes.append(node)
    rs = copy.deepcopy(next(s for s in scenario.resource_slices
                            if s["spec"].get("nodeName") == H200 and s["spec"]["driver"] == "gpu.nvidia.com"))
    rs["metadata"]["name"] = "part-node-gpu"
    rs["spec"]["nodeName"] = rs["spec"]["pool"]["name"] = "part-node"
    rs["spec"]["sharedCounters"] = [{"name": "gpu-0-counters", "counters": {"memory": {"value": "8"}}}]
    full, mig = rs["spec"]["devices"][0], rs["spec"]["devices"][1]
    full["consumesCounters"] = [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "8"}}}]
    halves = []
    for i in range(2):
        half = copy.deepcopy(mig)
        half["name"] = f"gpu-0-half-{i}"
        half["attributes"]["type"] = {"string": "mig"}
        half["attributes"]["profile"] = {"string": "4g.71gb"}
        half["consumesCounters"] = [{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "4"}}}]
        halves.append(half)
    rs["spec"]["devices"] = [full, *halves]
    scenario.resource_slices.append(rs)


def test_counters_stage_names_the_claim_using_the_shared_counters(make_sim):
    sim = make_sim(gates={"DRAPartitionableDevices": True}, edit=_partitionable)
    on_part = {"nodeSelector": {HOSTNAME: "part-node"}}
    sim.apply(claim("half", exactly("m", cls="mig.nvidia.com")), pod("holder", "half", **on_part))
    sim.apply(claim("whole", exactly("g")), pod("pw", "whole", **on_part))
    why = sim.why("pw")
    assert why.local_stage == "counters" or why.stage == "counters", str(why)
    assert _remedy(why, "free").claims == ["default/half"]
    assert "pod(s) default/holder" in _remedy(why, "free").text


def test_constraints_stage_with_match_attribute_near_miss(sim):
    one_root = [{"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}]
    not_l4 = (f"{PRODUCT} != 'NVIDIA L4'",)
    sim.apply(claim("root", exactly("gpus", count=3, selectors=not_l4), constraints=one_root), pod("pr", "root"))
    why = sim.why("pr")
    assert why.stage == "constraints"
    assert any(f"node {A100}: matchAttribute resource.kubernetes.io/pcieRoot needs 3" in m and "pci0000:3a: 2" in m
               for m in why.near_misses), why.near_misses
    assert _remedy(why, "drop-constraints").claim == "root"


def test_distinct_attribute_on_1_34_clashes_only_on_the_same_device(sim):
    """1.34's allocator compares distinctAttribute values by pointer: two GPUs of one product still fit."""
    distinct = [{"requests": ["gpus"], "distinctAttribute": "gpu.nvidia.com/productName"}]
    sim.apply(claim("d", exactly("gpus", count=2), constraints=distinct), pod("pd", "d"))
    assert sim.why("pd").state == r.ALLOCATED


def test_constraint_across_two_requests_needs_the_allocator(sim):
    same = [{"matchAttribute": "gpu.nvidia.com/uuid"}]  # two different devices never share a UUID
    h200 = (f"{PRODUCT} == 'NVIDIA H200'",)
    sim.apply(claim("two", exactly("h", selectors=h200), exactly("h2", selectors=h200), constraints=same),
              pod("p2", "two"))
    why = sim.why("p2")
    assert why.stage == "constraints"
    assert [q.request for q in why.requests] == ["h", "h2"]
    assert any("enough devices alone, but not together" in m for m in why.near_misses)


def test_node_stage_fits_elsewhere_but_the_node_selector_excludes_it(sim):
    sim.apply(claim("h", exactly("gpu", selectors=(f"{PRODUCT} == 'NVIDIA H200'",))),
              pod("pn", "h", nodeSelector={HOSTNAME: L4}))
    why = sim.why("pn")
    assert why.stage == "node" and H200 in why.fits_on
    assert any(f"fit on node {H200}, but the pod may not use it" in m for m in why.near_misses)
    assert why.local_stage == "selectors"
    assert L4 not in why.excluded and H200 in why.excluded


def test_node_stage_free_mig_slices_exist_on_an_excluded_node(sim):
    profile = ("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",)
    sim.apply(claim("mig", exactly("m", cls="mig.nvidia.com", selectors=profile)),
              pod("pmig", "mig", nodeSelector={HOSTNAME: A100}))
    why = sim.why("pmig")
    assert why.stage == "node" and why.fits_on == [H100]
    assert "nodeSelector" in why.excluded[H100]


def test_node_taint_excludes_a_node(make_sim):
    def edit(scenario):
        for node in scenario.nodes:
            if node["metadata"]["name"] == H200:
                node.setdefault("spec", {})["taints"] = [{"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]
    sim = make_sim(edit=edit)
    sim.apply(claim("h", exactly("gpu", selectors=(f"{PRODUCT} == 'NVIDIA H200'",))), pod("pn", "h"))
    why = sim.why("pn")
    assert why.stage == "node" and "maintenance" in why.excluded[H200]


def test_first_available_explains_every_alternative(sim):
    request = {"name": "gpu", "firstAvailable": [
        {"name": "b200", "deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": f"{PRODUCT} == 'NVIDIA B200'"}}]},
        {"name": "many", "deviceClassName": "gpu.nvidia.com", "count": 9},
    ]}
    sim.apply(claim("fa", request), pod("pfa", "fa"))
    why = sim.why("pfa")
    assert why.state == r.PENDING and why.stage == "selectors"  # the last alternative standing empties there
    assert {q.request: q.empties for q in why.requests} == {"gpu/b200": "selectors", "gpu/many": "class"}


def test_all_mode_needs_every_device_free(sim):
    sim.apply(claim("all", exactly("every", allocationMode="All", selectors=(f"{PRODUCT} == 'NVIDIA H200'",))),
              pod("pall", "all"))
    why = sim.why("pall")
    assert why.stage == "free" and why.requests[0].wanted == "all"
    assert _remedy(why, "free").claims == ["gpu-demo/trainer-gpu-x7k2p"]


L4_ONLY = (f"{PRODUCT} == 'NVIDIA L4'",)  # 4 GPUs: asking for 5 fails fast (the search tries 4! orders)


def test_two_claims_of_one_pod_each_explained(sim):
    sim.apply(claim("ok", exactly("gpu")), claim("five", exactly("gpus", count=5, selectors=L4_ONLY)),
              pod("p", "ok", "five"))
    why = sim.why("p")
    assert why.stage == "selectors"
    assert {q.claim for q in why.requests} == {"default/ok", "default/five"}
    assert [(x.kind, x.claim) for x in why.remedies] == [("drop-selectors", "five")]


def test_no_preemption_for_a_higher_priority_pod(sim):
    sim.apply(claim("h200s", exactly("gpus", count=8, selectors=(f"{PRODUCT} == 'NVIDIA H200'",))),
              pod("vip", "h200s", priority=1000))
    why = sim.why("vip")
    assert why.stage == "free"
    assert any("does not preempt" in n and "gpu-demo/trainer" in n for n in why.notes)


# --- states that are not allocation failures ---------------------------------------------------------


def test_template_missing_so_the_claim_is_never_created(sim):
    sim.apply(pod("pt", templates={"gpu": "no-such-template"}))
    why = sim.why("pt")
    assert why.state == r.NOT_CREATED and "does not exist" in why.summary
    assert "ResourceClaimTemplate default/no-such-template" in why.cited
    assert "PreEnqueue" in why.scheduler


def test_claim_not_created_yet_from_an_existing_template(sim):
    from drawb.plan.read import read_view
    from drawb.explain import explain

    sim.apply(pod("pt", ns="gpu-demo", templates={"gpu": "single-gpu"}))
    state = _with_pod_changed(read_view(sim.session.cluster, sim.session.rules_version, explaining=True), "pt",  # as the pod is before the controller's first pass
                              lambda p: p["status"].pop("resourceClaimStatuses", None))
    why = explain(state, "Pod", "gpu-demo", "pt")
    assert why.state == r.NOT_CREATED and "has not yet created" in why.summary
    assert "ResourceClaimTemplate gpu-demo/single-gpu" in why.cited


def test_claim_missing(sim):
    sim.apply(pod("pm", "nowhere"))
    why = sim.why("pm")
    assert why.state == r.CLAIM_MISSING and "ResourceClaim default/nowhere" in why.cited


def test_device_class_missing(sim):
    sim.apply(claim("odd", exactly("gpu", cls="tpu.example.com")), pod("po", "odd"))
    why = sim.why("po")
    assert why.state == r.CLASS_MISSING and "DeviceClass tpu.example.com" in why.cited
    assert "device class tpu.example.com does not exist" in why.scheduler  # the scheduler's PreFilter text


def test_claim_reserved_by_another_pod_on_a_node_this_pod_may_not_use(sim):
    sim.apply(claim("shared", exactly("gpu", selectors=(f"{PRODUCT} == 'NVIDIA H200'",))), pod("first", "shared"))
    sim.apply(pod("second", "shared", nodeSelector={HOSTNAME: L4}))
    why = sim.why("second")
    assert why.state == r.RESERVED_ELSEWHERE and why.stage == "node"
    assert "Pod default/first" in why.cited and H200 in why.summary


def test_allocated_but_not_bound(sim):
    from drawb.plan.read import read_view
    from drawb.explain import explain

    sim.apply(claim("c", exactly("gpu")), pod("pb", "c"))
    state = _with_pod_changed(read_view(sim.session.cluster, sim.session.rules_version, explaining=True), "pb", lambda p: p["spec"].pop("nodeName"))  # before binding
    why = explain(state, "Pod", "default", "pb")
    assert why.state == r.BINDING and why.devices


def test_fits_now_when_the_devices_were_freed_since_the_last_attempt(sim):
    from drawb.plan.read import read_view
    from drawb.testing.views import changed_view
    from drawb.explain import explain

    sim.apply(claim("h200s", exactly("gpus", count=8, selectors=(f"{PRODUCT} == 'NVIDIA H200'",))), pod("ph", "h200s"))
    state = read_view(sim.session.cluster, sim.session.rules_version, explaining=True)
    state = changed_view(state, claims=[c for c in state.claims if c["metadata"]["name"] != "trainer-gpu-x7k2p"])
    why = explain(state, "Pod", "default", "ph")
    assert why.state == r.FITS_NOW and H200 in why.summary


def test_allocated_claims_why_these_devices(sim):
    why = sim.why("notebook", "gpu-demo")
    assert why.state == r.ALLOCATED
    [device] = why.devices
    assert device.device == f"{H100}/gpu-5-mig-3g40gb-9-4" and device.attributes["profile"] == "3g.40gb"
    assert any("picks the same devices" in n for n in why.notes)


def test_why_a_claim_explains_the_pod_waiting_for_it(sim):
    sim.apply(claim("five", exactly("gpus", count=5, selectors=L4_ONLY)), pod("p5", "five"))
    why = sim.why("claim/five")
    assert why.stage == "selectors" and "pod default/p5" in why.target


def test_why_a_claim_no_pod_uses(sim):
    sim.apply(claim("lonely", exactly("gpu")))
    why = sim.why("claim/lonely")
    assert why.state == r.UNUSED and "would fit on node" in why.summary


def test_json_and_html_forms(sim):
    from drawb.commands.registry import run_line

    sim.apply(claim("five", exactly("gpus", count=5, selectors=L4_ONLY)), pod("p5", "five"))
    import json

    data = json.loads(run_line(sim.session, "why p5 --json"))
    assert data["stage"] == "selectors" and data["requests"][0]["wanted"] == "5"
    html = sim.why("p5")._repr_html_()
    assert "<table>" in html and "simulated" in html


@pytest.mark.parametrize("count", [4, 8])
def test_explained_fit_agrees_with_the_simulated_scheduler(sim, count):
    """When drawb says what would make it fit, doing it lets the simulated scheduler allocate."""
    sim.apply(claim("h200s", exactly("gpus", count=count, selectors=(f"{PRODUCT} == 'NVIDIA H200'",))),
              pod("ph", "h200s"))
    why = sim.why("ph")
    if count == 4:
        assert why.state == r.ALLOCATED
        return
    free = _remedy(why, "free")
    sim.cluster._discard("Pod", "gpu-demo", "trainer")  # the trainer ends (the demo pods are not drawb's to delete)
    sim.cluster._discard("ResourceClaim", "gpu-demo", free.claims[0].split("/")[1])
    assert sim.why("ph").state == r.ALLOCATED
