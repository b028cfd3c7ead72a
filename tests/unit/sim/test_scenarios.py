"""The simulated scenarios publish what the real NVIDIA driver publishes."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.scenarios import ScenarioError, build_scenario, list_scenarios, synthetic
from tests.conftest import load_fixture

VOLATILE = {"uuid", "parentUUID"}


def _by_device(slices: list[dict]) -> dict[tuple[str, str, str], dict]:
    return {
        (s["spec"]["driver"], s["spec"]["nodeName"], d["name"]): d
        for s in slices
        for d in s["spec"]["devices"]
    }


def _plain(device: dict) -> dict:
    attrs = {k: v for k, v in device.get("attributes", {}).items() if k not in VOLATILE}
    return {"attributes": attrs, "capacity": device.get("capacity", {})}


def test_default_scenario_matches_the_driver_fixture_device_for_device():
    ours = _by_device(build_scenario("default").resource_slices)
    real = _by_device(load_fixture("resourceslices.yaml"))
    assert sorted(ours) == sorted(real)
    for key, device in real.items():
        assert _plain(ours[key]) == _plain(device), key


def test_default_scenario_pools_and_slice_names_follow_the_driver():
    real = {(s["spec"]["driver"], s["spec"]["pool"]["name"]): s for s in load_fixture("resourceslices.yaml")}
    for ours in build_scenario().resource_slices:
        spec = ours["spec"]
        twin = real[(spec["driver"], spec["pool"]["name"])]
        assert spec["pool"] == twin["spec"]["pool"]
        assert ours["metadata"]["generateName"] == twin["metadata"]["generateName"]
        assert len(ours["metadata"]["name"]) == len(twin["metadata"]["name"])
        assert ours["metadata"]["ownerReferences"][0]["name"] == spec["nodeName"]


def test_uuids_are_unique_and_mig_parents_exist():
    devices = [d for s in build_scenario().resource_slices for d in s["spec"]["devices"]]
    uuids = [d["attributes"]["uuid"]["string"] for d in devices if "uuid" in d["attributes"]]
    assert len(uuids) == len(set(uuids)) == 38
    parents = {d["attributes"]["parentUUID"]["string"] for d in devices if "parentUUID" in d["attributes"]}
    assert parents and all(p.startswith("GPU-") for p in parents)


def test_scenarios_are_deterministic():
    assert build_scenario().resource_slices == build_scenario().resource_slices
    assert synthetic(5).resource_slices == synthetic(5).resource_slices


def test_default_scenario_has_the_five_chart_device_classes():
    names = [c["metadata"]["name"] for c in build_scenario().device_classes]
    expected = [c["metadata"]["name"] for c in load_fixture("deviceclasses.yaml")]
    assert sorted(names) == sorted(expected)
    real = {c["metadata"]["name"]: c["spec"] for c in load_fixture("deviceclasses.yaml")}
    for cls in build_scenario().device_classes:
        assert cls["spec"] == real[cls["metadata"]["name"]]


@pytest.mark.parametrize("nodes,per_node", [(1, 10), (4, 10), (8, 3), (12, 8)])
def test_synthetic_clusters_have_the_asked_size(nodes, per_node):
    scenario = synthetic(nodes, per_node)
    assert scenario.device_count == nodes * per_node
    assert len(scenario.nodes) == nodes
    names = [s["metadata"]["name"] for s in scenario.resource_slices]
    assert len(names) == len(set(names))


def test_synthetic_by_name_and_bad_names():
    assert build_scenario("synthetic:3x4").device_count == 12
    with pytest.raises(ScenarioError, match="synthetic:<nodes>"):
        build_scenario("synthetic:lots")
    with pytest.raises(ScenarioError, match="known scenarios: default"):
        build_scenario("nope")
    assert "default" in list_scenarios()


def test_a_node_of_more_than_128_devices_publishes_one_pool_of_several_slices():
    from drawb.alloc import allocate
    from drawb.cluster.sim.cluster import SimCluster
    from drawb.inventory import device_frame

    scenario = synthetic(2, 300)
    gpu = [s for s in scenario.resource_slices if s["spec"]["driver"] == "gpu.nvidia.com"
           and s["spec"]["nodeName"] == "gpu-node-00000"]
    assert [len(s["spec"]["devices"]) for s in gpu] == [128, 128, 44]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in gpu} == {3}
    assert len({s["spec"]["pool"]["name"] for s in gpu}) == 1
    assert len({s["metadata"]["name"] for s in gpu}) == 3
    assert len({d["name"] for s in gpu for d in s["spec"]["devices"]}) == 300
    from drawb.gpu.driver import name_suffix  # the first slice keeps the name of a one-slice pool

    assert gpu[0]["metadata"]["name"].endswith("-" + name_suffix(scenario.name, "gpu.nvidia.com", "gpu-node-00000"))

    cluster = SimCluster(scenario)
    frame = device_frame(cluster.list("ResourceSlice"))
    assert len(frame[frame["driver"] == "gpu.nvidia.com"]) == 600 and frame["pool_complete"].all()
    last = gpu[2]["spec"]["devices"][-1]
    uuid = last["attributes"]["uuid"]["string"]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "last", "namespace": "default", "uid": "u1"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "gpu.nvidia.com",
                 "selectors": [{"cel": {"expression": f'device.attributes["gpu.nvidia.com"].uuid == "{uuid}"'}}]}}]}}}
    node = cluster.get("Node", "gpu-node-00000")
    classes = cluster.list("DeviceClass")
    found = allocate([claim], node=node, slices=cluster.list("ResourceSlice"), classes=classes)
    assert found is not None
    assert [(r["pool"], r["device"]) for r in found[0]["devices"]["results"]] == [("gpu-node-00000", last["name"])]
    # Without its third slice the pool is incomplete: the frame says so, and the allocator does not use it.
    partial = [s for s in cluster.list("ResourceSlice") if s["metadata"]["name"] != gpu[2]["metadata"]["name"]]
    frame = device_frame(partial)
    assert not frame.loc[(frame["pool"] == "gpu-node-00000") & (frame["driver"] == "gpu.nvidia.com"), "pool_complete"].any()
    assert allocate([claim], node=node, slices=partial, classes=classes) is None


def test_a_large_cluster_built_by_a_command_leaves_the_collector_and_is_collected_once_replaced():
    import gc
    import weakref

    from drawb.cluster.sim.cluster import SimCluster
    from drawb.collector import collection_around_command

    gc.collect()
    before = gc.get_freeze_count()
    with collection_around_command():  # as a front end runs `connect`
        cluster = SimCluster("synthetic:5000x1")
    assert gc.get_freeze_count() > before + 100_000
    ref = weakref.ref(cluster)  # the cluster and its lifecycle refer to each other: only the collector frees them
    cluster.close()
    del cluster
    try:
        with collection_around_command():  # a second `connect`: the first cluster is garbage now
            replacement = SimCluster("synthetic:5000x1")
        assert ref() is None
        assert weakref.ref(replacement)() is not None and gc.get_freeze_count() > 100_000
    finally:
        gc.unfreeze()


def test_a_small_command_leaves_the_collector_as_it_was():
    import gc

    from drawb.cluster.sim.cluster import SimCluster
    from drawb.collector import collection_around_command

    before = gc.get_freeze_count()
    with collection_around_command():
        assert not gc.isenabled()
        SimCluster("default")
    assert gc.isenabled() and gc.get_freeze_count() == before


def test_a_scenario_file_sets_its_image_pulls_and_bad_values_are_named(tmp_path):
    from importlib import resources

    bundled = (resources.files("drawb.cluster.sim.scenarios") / "default.yaml").read_text()
    assert build_scenario("default").image_pull_seconds == 0.5
    realistic = tmp_path / "realistic.yaml"
    realistic.write_text(bundled.replace("image_pull_seconds: 0.5", "image_pull_seconds: 12"))
    scenario = build_scenario(str(realistic))
    assert (scenario.name, scenario.image_pull_seconds, len(scenario.nodes)) == ("realistic", 12.0, 4)
    for bad in ("-1", "'slow'", "true", "7200"):
        realistic.write_text(bundled.replace("image_pull_seconds: 0.5", f"image_pull_seconds: {bad}"))
        with pytest.raises(ScenarioError, match=f"scenario file '{realistic}': image_pull_seconds must be a number "
                                                f"of seconds from 0 to 3600, not "):
            build_scenario(str(realistic))
    with pytest.raises(ScenarioError, match="scenario file 'nowhere.yaml' does not exist"):
        build_scenario("nowhere.yaml")
    realistic.write_text("nodes: [")
    with pytest.raises(ScenarioError, match="is not valid YAML"):
        build_scenario(str(realistic))
