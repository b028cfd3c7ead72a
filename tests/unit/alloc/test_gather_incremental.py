"""A large AllocatedState is made from the last one by the claims added, removed or replaced; it must
equal the state counted from nothing, also when two claims hold the same device or share, and the
pools it reports as changed must be exactly those whose devices in use differ."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import drawb.alloc.state as gathered
from drawb.alloc.state import changed_since, gather_allocated

POOLS = [("gpu.example.com", f"node-{i}") for i in range(6)]


def _claim(n: int, devices: list[tuple[int, int, int | None]], admin: bool = False) -> dict:
    results = []
    for pool, device, share in devices:
        driver, name = POOLS[pool]
        result = {"request": "r", "driver": driver, "pool": name, "device": f"gpu-{device}"}
        if share is not None:
            result["shareID"] = f"share-{share}"
        if admin:
            result["adminAccess"] = True
        results.append(result)
    claim = {"metadata": {"name": f"c{n}", "namespace": "ns"}}
    if results:
        claim["status"] = {"allocation": {"devices": {"results": results}}}
    return claim


DEVICE = st.tuples(st.integers(0, 5), st.integers(0, 3), st.one_of(st.none(), st.integers(0, 1)))
CLAIM = st.tuples(st.lists(DEVICE, max_size=3), st.booleans())


def _from_nothing(claims: list[dict], consumable: bool):
    kept = dict(gathered._tallies)
    try:
        return gathered._count(claims, [(c.get("status") or {}).get("allocation") for c in claims], consumable)
    finally:
        gathered._tallies.clear()
        gathered._tallies.update(kept)


def _in_use(state) -> dict:
    out: dict = {}
    for driver, pool, name in state.allocated:
        out.setdefault((driver, pool), set()).add(name)
    for driver, pool, name, share in state.shared:
        out.setdefault((driver, pool), set()).add((name, share))
    return out


@pytest.fixture(autouse=True)
def small_lists_count_as_large(monkeypatch):
    """The incremental path starts at a few claims here, so hypothesis can shrink short lists."""
    monkeypatch.setattr(gathered, "_INCREMENTAL", 4)
    gathered._tallies.clear()
    gathered._states.clear()


@settings(max_examples=300, deadline=None)
@given(start=st.lists(CLAIM, min_size=14, max_size=30), edits=st.lists(
    st.tuples(st.sampled_from(["remove", "add", "replace"]), st.integers(0, 10_000), CLAIM), min_size=1, max_size=3),
    consumable=st.booleans())
@example(start=[([], False)] * 14, edits=[("add", 1, ([], False)), ("remove", 1, ([], False))], consumable=False)
def test_a_state_made_from_the_last_equals_one_counted_from_nothing(start, edits, consumable):
    gathered._tallies.clear()
    gathered._states.clear()
    claims = [_claim(n, devices, admin) for n, (devices, admin) in enumerate(start)]
    first = gather_allocated(claims, consumable)
    claims = list(claims)
    for n, (edit, at, (devices, admin)) in enumerate(edits):
        at %= len(claims)
        if edit == "remove":
            del claims[at]
        elif edit == "add":
            claims.insert(at, _claim(1000 + n, devices, admin))
        else:
            claims[at] = _claim(at, devices, admin)
    made = gather_allocated(claims, consumable)
    assert gathered.tally_of(made) is not None
    expected = _from_nothing(claims, consumable)
    assert made.allocated == expected.allocated
    assert made.shared == expected.shared
    before, after = _in_use(first), _in_use(made)
    assert changed_since(made, first) == {pool for pool in {*before, *after} if before.get(pool) != after.get(pool)}


def test_two_claims_holding_one_device_keep_it_in_use_until_both_are_gone():
    filler = [_claim(n, [(5, 3, None)]) for n in range(8)]
    a, b = _claim(900, [(0, 0, None)]), _claim(901, [(0, 0, None)])
    gather_allocated([*filler, a, b], False)
    one_left = gather_allocated([*filler, a], False)
    assert ("gpu.example.com", "node-0", "gpu-0") in one_left.allocated
    none_left = gather_allocated(filler, False)
    assert ("gpu.example.com", "node-0", "gpu-0") not in none_left.allocated
    assert changed_since(none_left, one_left) == {POOLS[0]}
