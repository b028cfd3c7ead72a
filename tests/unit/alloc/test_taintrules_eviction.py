"""DeviceTaintRules on devices (the scheduler's tracker) and NoExecute eviction times (the controller's)."""

from __future__ import annotations

from drawb.alloc.eviction import claim_eviction, pods_of_claim, taint_delay
from drawb.alloc.taintrules import selects, with_rule_taints

NOEXEC = {"key": "k", "value": "v", "effect": "NoExecute"}


def rule(**selector) -> dict:
    return {"metadata": {"name": "r"}, "spec": {"deviceSelector": selector, "taint": dict(NOEXEC)}}


def test_a_rule_selects_by_each_field_it_names_and_nothing_without_a_selector():
    assert selects(rule(), "d", "p", "x")  # empty selector: every device
    assert selects(rule(driver="d", pool="p"), "d", "p", "x")
    assert not selects(rule(driver="d", pool="p"), "d", "q", "x")
    assert not selects(rule(device="y"), "d", "p", "x")
    assert not selects({"spec": {"taint": NOEXEC}}, "d", "p", "x")


def test_rule_taints_are_added_after_the_devices_own_and_untouched_slices_stay_the_same_objects():
    own = {"key": "own", "effect": "NoSchedule"}
    a = {"metadata": {"name": "a"}, "spec": {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "x", "taints": [own]}, {"name": "y"}]}}
    b = {"metadata": {"name": "b"}, "spec": {"driver": "d", "pool": {"name": "q"}, "devices": [{"name": "x"}]}}
    out = with_rule_taints([a, b], [rule(pool="p", device="x")])
    assert out[1] is b and out[0] is not a
    assert out[0]["spec"]["devices"][0]["taints"] == [own, NOEXEC]
    assert "taints" not in out[0]["spec"]["devices"][1]
    assert a["spec"]["devices"][0]["taints"] == [own]  # the given slice is unchanged


def test_the_delay_is_the_smallest_matching_toleration_seconds_and_unlimited_tolerations_keep_the_pod():
    assert taint_delay({"key": "k", "effect": "NoSchedule"}, []) is None
    assert taint_delay(NOEXEC, []) == 0
    assert taint_delay(NOEXEC, [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]) is None
    seconds = [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 300},
               {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
    assert taint_delay(NOEXEC, seconds) == 60
    assert taint_delay(NOEXEC, [{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -5}]) == 0
    assert taint_delay(NOEXEC, [{"operator": "Exists", "effect": "NoSchedule"}]) == 0  # another effect: not tolerated
    assert taint_delay(NOEXEC, [{"key": "k", "value": "w", "effect": "NoExecute"}]) == 0  # another value


def test_a_claims_eviction_is_its_earliest_and_reaches_only_bound_pods_it_is_reserved_for():
    claim = {"metadata": {"name": "c"}, "status": {
        "allocation": {"devices": {"results": [
            {"driver": "d", "pool": "p", "device": "x", "tolerations": [{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]},
            {"driver": "d", "pool": "p", "device": "y"}]}},
        "reservedFor": [{"resource": "pods", "name": "a", "uid": "1"}, {"resource": "pods", "name": "b", "uid": "2"}]}}
    late = {**NOEXEC, "timeAdded": 100}
    early = {**NOEXEC, "timeAdded": 10}
    taints = {("d", "p", "x"): [early], ("d", "p", "y"): [late]}
    found = claim_eviction(claim, lambda d: taints.get(d, ()), lambda t: t["timeAdded"])
    assert (found.device, found.delay) == (("d", "p", "x"), 30)  # 10 + 30 before 100 + 0
    pods = {"1": {"metadata": {"name": "a"}, "spec": {"nodeName": "n"}}, "2": {"metadata": {"name": "b"}, "spec": {}}}
    assert [p["metadata"]["name"] for p in pods_of_claim(claim, pods)] == ["a"]
    assert claim_eviction(claim, lambda d: (), lambda t: 0) is None
