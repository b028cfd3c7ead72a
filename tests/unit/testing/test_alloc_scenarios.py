"""The allocation scenario generator: deterministic, valid-looking objects, every feature drawn."""

from __future__ import annotations

import collections
import math

import orjson

from drawb.testing.alloc_scenarios import SCENARIO_LABEL, SEARCH_BOUND, generate, generate_many


def test_same_seed_same_scenario_other_seed_other():
    assert orjson.dumps(generate(7).objects()) == orjson.dumps(generate(7).objects())
    assert orjson.dumps(generate(7).objects()) != orjson.dumps(generate(8).objects())


def test_names_and_labels_keep_scenarios_apart():
    scenarios = generate_many(40)
    names = [o["metadata"]["name"] for s in scenarios for o in s.objects()]
    assert len(names) == len(set(names))
    for s in scenarios:
        assert all(o["metadata"]["labels"][SCENARIO_LABEL] == s.name for o in s.objects())
        assert all(s.name in o["metadata"]["name"] for o in s.objects())
        nodes = {n["metadata"]["name"] for n in s.nodes}
        assert all(rs["spec"]["nodeName"] in nodes for rs in s.slices)


def test_160_scenarios_draw_every_feature():
    counts = collections.Counter(f for s in generate_many(160) for f in s.features)
    wanted = {"static MIG", "partitionable devices", "device taints", "existing allocations",
              "existing admin-access allocation", "firstAvailable", "allocationMode All", "matchAttribute",
              "distinctAttribute", "request selector that errors", "class selector that errors", "admin access",
              "tolerations", "over the claim limit"}
    assert wanted <= set(counts), wanted - set(counts)
    assert min(counts[f] for f in wanted) >= 5


def test_partitionable_devices_consume_their_slice_counters_within_limits():
    scenario = next(s for s in generate_many(60) if "partitionable devices" in s.features)
    rs = next(rs for rs in scenario.slices if rs["spec"].get("sharedCounters"))
    (counter_set,) = rs["spec"]["sharedCounters"]
    assert len(rs["spec"]["devices"]) <= 64
    for dev in rs["spec"]["devices"]:
        (consumed,) = dev["consumesCounters"]
        assert consumed["counterSet"] == counter_set["name"]
        assert set(consumed["counters"]) <= set(counter_set["counters"])
        assert "uuid" not in dev["attributes"]


def test_existing_allocations_use_published_devices_once():
    for s in generate_many(60):
        published = {(rs["spec"]["pool"]["name"], d["name"]) for rs in s.slices for d in rs["spec"]["devices"]}
        seen = collections.Counter()
        for claim in s.allocated:
            for r in claim["status"]["allocation"]["devices"]["results"]:
                assert (r["pool"], r["device"]) in published
                if not r.get("adminAccess"):
                    seen[(r["pool"], r["device"])] += 1
        assert all(n == 1 for n in seen.values())


def test_searches_stay_small():
    # the 1.34 allocator tries ordered picks; counts are lowered until the product stays bounded
    for s in generate_many(160):
        devices = max(len(rs["spec"]["devices"]) for rs in s.slices)
        tries = 1
        for claim in s.claims:
            for r in claim["spec"]["devices"]["requests"]:
                for body in [r["exactly"]] if "exactly" in r else r["firstAvailable"]:
                    count = body.get("count", 1)
                    if body.get("allocationMode") != "All" and count <= 32:
                        tries *= math.perm(devices, min(count, devices))
        assert tries <= SEARCH_BOUND or sum(len(c["spec"]["devices"]["requests"]) for c in s.claims) == len(s.claims)


def test_from_1_35_a_slice_holds_counters_or_devices_and_pools_count_their_slices():
    for old, new in zip(generate_many(60), generate_many(60, kubernetes_version="1.37")):
        assert not any(rs["spec"].get("sharedCounters") and rs["spec"].get("devices") for rs in new.slices)
        def pool(rs):
            return rs["spec"]["driver"], rs["spec"]["pool"]["name"]

        pools = collections.Counter(pool(rs) for rs in new.slices)
        assert all(rs["spec"]["pool"]["resourceSliceCount"] == pools[pool(rs)] for rs in new.slices)
        def devices(slices):
            return sorted(d["name"] for rs in slices for d in rs["spec"].get("devices", []))

        def counter_sets(slices):
            return sorted(c["name"] for rs in slices for c in rs["spec"].get("sharedCounters", []))

        assert devices(new.slices) == devices(old.slices) and counter_sets(new.slices) == counter_sets(old.slices)
    assert any(len(new.slices) > len(old.slices) for old, new in zip(generate_many(60), generate_many(60, kubernetes_version="1.37")))


def _constraint_kinds(scenarios) -> set[str]:
    return {key for s in scenarios for c in s.claims for constraint in c["spec"]["devices"].get("constraints") or []
            for key in constraint if key != "requests"}


def test_no_field_the_target_api_server_drops_is_generated():
    # 1.35 drops distinctAttribute while DRAConsumableCapacity (alpha) is off; 1.34 keeps it, 1.36 has the gate on
    assert _constraint_kinds(generate_many(60, kubernetes_version="v1.35.4")) == {"matchAttribute"}
    on = _constraint_kinds(generate_many(60, kubernetes_version="v1.35.4",
                                         feature_gates={"DRAConsumableCapacity": True, "DRAPartitionableDevices": True}))
    assert on == {"matchAttribute", "distinctAttribute"}
    assert _constraint_kinds(generate_many(60, kubernetes_version="1.34")) == on
    assert _constraint_kinds(generate_many(60, kubernetes_version="v1.36.3")) == on


def _all_beside_partitionable(scenarios) -> int:
    return sum(1 for s in scenarios if "partitionable devices" in s.features and "allocationMode All" in s.features)


def test_nothing_the_target_scheduler_crashes_on_is_generated():
    # v1.35.4's allocator crashes on an "All" device that consumes counters (fixed in v1.35.6)
    assert _all_beside_partitionable(generate_many(160, kubernetes_version="v1.35.4")) == 0
    assert _all_beside_partitionable(generate_many(160, kubernetes_version="v1.35.6")) > 0
