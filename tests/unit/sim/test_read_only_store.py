"""The simulated store's objects are read-only in fact: what get, list and a watch hand out raises on any
change, at the top and inside; a copy is plain and changeable; a kept cluster read back is read-only too."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
import yaml

from drawb.cluster.sim import state
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.tree import ReadOnlyObject, copy_tree, loading_kept

CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "one", "namespace": "default", "labels": {"team": "a"}},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}

# Each change a caller might try, on a part of a stored claim, and what the error must name.
CHANGES = [
    (lambda c: c.__setitem__("spec", {}), "__setitem__('spec'", "ResourceClaim 'default/one'"),
    (lambda c: c.pop("status", None), "pop('status'", "ResourceClaim 'default/one'"),
    (lambda c: c.update(kind="Pod"), "update(", "ResourceClaim 'default/one'"),
    (lambda c: c["metadata"]["labels"].__setitem__("team", "b"), "__setitem__('team'", "map inside a stored object"),
    (lambda c: c["metadata"].setdefault("annotations", {}), "setdefault('annotations'", "map inside"),
    (lambda c: c["metadata"]["labels"].clear(), "clear(", "map inside"),
    (lambda c: c["spec"]["devices"]["requests"].append({}), "append({}", "list of 1 item(s)"),
    (lambda c: c["spec"]["devices"]["requests"].__delitem__(0), "__delitem__(0", "list of 1 item(s)"),
    (lambda c: c["spec"]["devices"]["requests"][0]["exactly"].__setitem__("count", 2), "__setitem__('count'",
     "map inside"),
]


@pytest.fixture
def sim() -> SimCluster:
    cluster = SimCluster(workloads=False)
    cluster.apply([CLAIM])
    return cluster


def handed_out(sim: SimCluster) -> dict[str, dict]:
    """The claim as each read hands it out."""
    events = []
    watch = sim.watch("ResourceClaim", "default")
    listed = watch.subscribe(lambda kind, obj: events.append(obj))
    sim.apply([{**CLAIM, "metadata": {**CLAIM["metadata"], "labels": {"team": "a", "v": "2"}}}])
    return {"get": sim.get("ResourceClaim", "one", "default"), "list": sim.list("ResourceClaim", "default")[0],
            "watch list": listed[0], "watch event": events[-1]}


@pytest.mark.parametrize("change, method, about", CHANGES)
def test_writing_to_a_handed_out_object_raises_naming_what(sim, change, method, about):
    for read, claim in handed_out(sim).items():
        before = copy_tree(claim)
        with pytest.raises(ReadOnlyObject) as raised:
            change(claim)
        assert method in str(raised.value) and about in str(raised.value), (read, str(raised.value))
        assert "read-only" in str(raised.value) and "copy" in raised.value.hint
        assert claim == before, read  # nothing changed


def test_in_place_operators_and_sorting_raise(sim):
    claim = sim.get("ResourceClaim", "one", "default")
    requests, labels = claim["spec"]["devices"]["requests"], claim["metadata"]["labels"]
    for change in (lambda: requests.__iadd__([{}]), lambda: requests.sort(), lambda: requests.insert(0, {}),
                   lambda: labels.__ior__({"x": "y"}), lambda: labels.popitem(), lambda: labels.__delitem__("team")):
        with pytest.raises(ReadOnlyObject):
            change()


def test_a_copy_is_plain_and_changeable_and_applies(sim):
    claim = sim.get("ResourceClaim", "one", "default")
    for mine in (copy_tree(claim), copy.deepcopy(claim)):
        mine["metadata"]["labels"]["team"] = "b"
        mine["spec"]["devices"]["requests"].append({"name": "more", "exactly": {"deviceClassName": "gpu.nvidia.com"}})
        assert type(mine["metadata"]) is dict and type(mine["spec"]["devices"]["requests"]) is list
    assert claim["metadata"]["labels"]["team"] == "a"
    sim.apply([mine])
    assert sim.get("ResourceClaim", "one", "default")["metadata"]["labels"]["team"] == "b"


def test_what_apply_returns_is_the_callers_own(sim):
    returned = sim.apply([CLAIM])[0]
    returned["metadata"]["labels"]["team"] = "c"  # a plain copy: the stored claim stays as it was
    assert sim.get("ResourceClaim", "one", "default")["metadata"]["labels"]["team"] == "a"


def test_stored_objects_read_and_serialize_as_dicts_and_lists(sim):
    claim = sim.get("ResourceClaim", "one", "default")
    assert isinstance(claim, dict) and isinstance(claim["spec"]["devices"]["requests"], list)
    assert json.loads(json.dumps(claim)) == claim
    assert yaml.safe_load(yaml.safe_dump(claim)) == claim


def test_a_kept_cluster_read_back_is_read_only(sim, tmp_path):
    state.write(sim, None, tmp_path / "c.state")
    back = state.read(tmp_path / "c.state")
    claim = back.get("ResourceClaim", "one", "default")
    assert claim == sim.get("ResourceClaim", "one", "default")
    with pytest.raises(ReadOnlyObject):
        claim["metadata"]["labels"]["team"] = "b"
    pickled = pickle.loads(pickle.dumps(sim))  # not only through the state file
    with pytest.raises(ReadOnlyObject):
        pickled.list("ResourceSlice")[0]["spec"]["devices"].append({})


def test_a_load_cut_short_leaves_stored_objects_read_only(sim):
    cut = pickle.dumps(sim)[:-200]
    with pytest.raises(Exception), loading_kept():
        pickle.loads(cut)
    with pytest.raises(ReadOnlyObject):
        sim.get("ResourceClaim", "one", "default")["metadata"]["labels"]["team"] = "b"
    with pytest.raises(ReadOnlyObject):
        sim.list("ResourceSlice")[0]["spec"]["devices"].extend([{}])


def test_a_synthetic_scenarios_gpus_are_read_only():  # stamped read-only from templates, not frozen when stored
    slices = SimCluster("synthetic:4x2", workloads=False).list("ResourceSlice")
    device = next(rs for rs in slices if rs["spec"]["driver"] == "gpu.nvidia.com")["spec"]["devices"][0]
    with pytest.raises(ReadOnlyObject):
        device["attributes"]["uuid"]["string"] = "GPU-other"
    with pytest.raises(ReadOnlyObject):
        device["attributes"]["productName"] = {"string": "other"}
    with pytest.raises(ReadOnlyObject):
        device["capacity"]["memory"] = {"value": "1Gi"}
