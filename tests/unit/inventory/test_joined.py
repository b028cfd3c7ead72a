"""JoinedInventory: after any sequence of slice and claim events, the spliced frame equals a fresh build."""

from __future__ import annotations

import copy
from unittest import mock

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from drawb.inventory import _overwrite, device_frame
from drawb.inventory.allocated import AllocationTable, JoinedInventory, claim_id
from drawb.inventory.claims import allocations
from drawb.inventory.join import join_allocations
from tests.conftest import load_fixture
from tests.unit.inventory.test_live import DYNMIG, LEGACY, MAIN, _mutations

SLICES = MAIN + DYNMIG[:3]
KEYS = list(device_frame(SLICES + LEGACY)[["driver", "pool", "device"]].itertuples(index=False, name=None))
KEYS.append(("gpu.nvidia.com", "no-such-pool", "gpu-0"))  # allocated, but not in any slice


def claim(namespace: str, name: str, results: list[tuple[str, str, str, str]], pods: list[str]) -> dict:
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
           "metadata": {"namespace": namespace, "name": name}, "spec": {"devices": {"requests": []}}}
    if results:
        obj["status"] = {
            "allocation": {"devices": {"results": [
                {"driver": d, "pool": p, "device": dev, "request": r} for d, p, dev, r in results]}},
            "reservedFor": [{"resource": "pods", "name": pod, "uid": pod} for pod in pods],
        }
    return obj


def expected_frame(joined: JoinedInventory, claims: dict) -> pd.DataFrame:
    """The frame built afresh from the slices and claims held now."""
    problems: list[str] = []
    ordered = [claims[k] for k in sorted(claims)]
    return join_allocations(device_frame(joined.devices.slices()), allocations(ordered, problems), problems)


def assert_fresh(joined: JoinedInventory, claims: dict) -> None:
    got, expected = joined.frame, expected_frame(joined, claims)
    pd.testing.assert_frame_equal(got, expected)
    for key in ("attributes", "lists", "capacities"):
        assert got.attrs["drawb"][key] == expected.attrs["drawb"][key], key
    assert sorted(got.attrs["drawb"]["problems"]) == sorted(expected.attrs["drawb"]["problems"])


_results = st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(["gpu", "mig", "nic"])), max_size=4)
_claim_events = st.builds(
    lambda event, ns, name, results, pods, bad: ("ResourceClaim", event, _with_bad(
        claim(ns, name, [(*k, r) for k, r in results], pods), bad)),
    st.sampled_from(["ADDED", "MODIFIED", "MODIFIED", "DELETED"]),
    st.sampled_from(["default", "ml", "ml-a"]),
    st.sampled_from(["c1", "c2", "c3"]),
    _results,
    st.lists(st.sampled_from(["pod-a", "pod-b", "pod-c"]), max_size=2),
    st.booleans(),
)
_slice_events = _mutations(SLICES + LEGACY).map(lambda pair: ("ResourceSlice", *pair))


def _with_bad(obj: dict, bad: bool) -> dict:
    """A claim with one malformed result (its driver missing) when ``bad``: reported and left out."""
    if bad and obj.get("status"):
        obj["status"]["allocation"]["devices"]["results"].append({"pool": "p", "device": "d", "request": "x"})
    return obj


def _apply(joined: JoinedInventory, claims: dict, kind: str, event: str, obj: dict) -> None:
    joined.apply(kind, event, obj)
    if kind == "ResourceClaim":
        if event == "DELETED":
            claims.pop(claim_id(obj), None)
        else:
            claims[claim_id(obj)] = obj


@settings(max_examples=40, deadline=None)
@given(
    st.lists(_claim_events, max_size=4),
    st.lists(st.tuples(st.one_of(_claim_events, _slice_events), st.booleans()), max_size=14),
)
def test_any_event_sequence_matches_a_fresh_build(initial, events):
    claims = {}
    for _, event, obj in initial:
        if event != "DELETED":
            claims[claim_id(obj)] = obj
    handed_out = []
    with mock.patch.object(_overwrite, "CHUNK_ROWS", 4):  # rows overwritten across string chunks
        joined = JoinedInventory(SLICES, list(claims.values()))
        assert_fresh(joined, claims)
        for (kind, event, obj), look in events:
            _apply(joined, claims, kind, event, copy.deepcopy(obj))
            if look:  # reading in between, or not, must not matter
                frame = joined.frame
                handed_out.append((frame, frame.copy(deep=True)))
                assert_fresh(joined, claims)
        assert_fresh(joined, claims)
    for frame, as_it_was in handed_out:  # a frame once handed out never changes
        pd.testing.assert_frame_equal(frame, as_it_was)


def test_a_claim_event_changes_only_its_devices():
    joined = JoinedInventory(SLICES)
    before = joined.frame
    a100 = KEYS[0]
    joined.apply("ResourceClaim", "ADDED", claim("ml", "train", [(*a100, "gpu")], ["pod-a"]))
    after = joined.frame
    row = (after["pool"] == a100[1]) & (after["device"] == a100[2]) & (after["driver"] == a100[0])
    assert after.loc[row, "claim"].tolist() == ["ml/train"]
    assert after.loc[row, "reserved_for"].tolist() == [["pod-a"]]
    assert after["claim"].notna().sum() == 1
    assert before["claim"].isna().all()  # a frame handed out earlier does not change
    pd.testing.assert_frame_equal(after.drop(columns=["claim", "request", "reserved_for"]),
                                  before.drop(columns=["claim", "request", "reserved_for"]))


def test_a_shared_device_lists_its_claims_in_namespace_and_name_order():
    key = KEYS[0]
    table = AllocationTable()
    table.apply("ADDED", claim("ml-a", "x", [(*key, "gpu")], ["p2"]))
    table.apply("ADDED", claim("ml", "y", [(*key, "gpu")], ["p1", "p2"]))
    assert table.table[key] == (["ml/y", "ml-a/x"], ["gpu", "gpu"], ["p1", "p2"])
    assert table.apply("DELETED", claim("ml", "y", [], [])) == {key}
    assert table.table[key] == (["ml-a/x"], ["gpu"], ["p2"])
    assert table.apply("BOOKMARK", {"metadata": {"resourceVersion": "7"}}) == set()


def test_a_slice_added_after_its_claim_shows_the_allocation():
    name = MAIN[0]["metadata"]["name"]
    rest = [s for s in SLICES if s["metadata"]["name"] != name]
    key = next(k for k in KEYS if k[1] == MAIN[0]["spec"]["pool"]["name"] and k[0] == MAIN[0]["spec"]["driver"])
    joined = JoinedInventory(rest, [claim("default", "early", [(*key, "gpu")], [])])
    assert joined.frame["claim"].isna().all()
    joined.apply("ResourceSlice", "ADDED", MAIN[0])
    assert joined.frame["claim"].dropna().tolist() == ["default/early"]
    assert_fresh(joined, {("default", "early"): claim("default", "early", [(*key, "gpu")], [])})


def test_an_unknown_kind_is_refused():
    try:
        JoinedInventory().apply("Pod", "ADDED", {})
    except ValueError as exc:
        assert "ResourceSlice and ResourceClaim" in str(exc)
    else:
        raise AssertionError("no error")
