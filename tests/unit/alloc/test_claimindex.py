"""The one claim index: made from the last one, it equals the index made in full, and knows which pools changed."""

from __future__ import annotations

import random

from drawb.alloc.claimindex import ClaimIndex, claim_index


def _claim(name: str, *devices: tuple[str, str, str], admin: bool = False) -> dict:
    results = [{"driver": d, "pool": p, "device": dev, **({"adminAccess": True} if admin else {})} for d, p, dev in devices]
    return {"metadata": {"name": name}, "status": {"allocation": {"devices": {"results": results}}} if results else {}}


def _random_claims(rng: random.Random, n: int) -> list[dict]:
    claims = []
    for i in range(n):
        devices = [("gpu.nvidia.com", f"node-{rng.randrange(6)}", f"gpu-{rng.randrange(4)}") for _ in range(rng.randrange(3))]
        claims.append(_claim(f"c{i}", *devices, admin=rng.random() < 0.1))
    return claims


def test_an_index_made_from_the_last_one_equals_one_made_in_full():
    rng = random.Random(7)
    claims = _random_claims(rng, 40)
    index = ClaimIndex.of(claims)
    for _ in range(30):
        kept = [c for c in claims if rng.random() < 0.8]
        claims = kept[: len(kept) // 2] + _random_claims(rng, rng.randrange(6)) + kept[len(kept) // 2:]
        updated, full = index.updated(claims), ClaimIndex.of(claims)
        assert updated.by_pool == full.by_pool
        assert updated.by_device == full.by_device
        assert {k: [id(c) for c in v] for k, v in updated.by_pool.items()} == \
            {k: [id(c) for c in v] for k, v in full.by_pool.items()}
        changed = updated.changed_since(index)
        assert all(index.by_pool.get(p) == updated.by_pool.get(p) for p in index.by_pool.keys() | updated.by_pool.keys()
                   if p not in changed)
        index = updated


def test_a_claim_with_two_devices_of_one_pool_is_listed_once_for_the_pool():
    claim = _claim("two", ("d", "p", "a"), ("d", "p", "b"))
    index = ClaimIndex.of([claim])
    assert index.by_pool == {("d", "p"): [claim]}
    assert index.by_device == {("d", "p", "a"): [(claim, False)], ("d", "p", "b"): [(claim, False)]}


def test_the_same_claims_give_the_same_index_and_other_claims_one_that_knows_what_changed():
    a, b = _claim("a", ("d", "p1", "x")), _claim("b", ("d", "p2", "y"))
    first = claim_index([a, b])
    assert claim_index([a, b]) is first
    unallocated = _claim("pending")
    second = claim_index([a, unallocated, b])
    assert second.changed_since(first) == frozenset()  # an unallocated claim holds nothing
    third = claim_index([a])
    assert third.changed_since(second) == {("d", "p2")}
    assert third.changed_since(first) is None  # not made from it: unknown
