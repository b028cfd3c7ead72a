"""The NVIDIA DRA driver's releases as data: what each publishes, how a scenario names one, and telling a
release from what a cluster's slices publish."""

from __future__ import annotations

import pytest

from drawb.cluster.sim.scenarios import build_scenario
from drawb.cluster.sim.scenarios.loader import _from_file
from drawb.cluster.sim.scenarios.scenario import ScenarioError
from drawb.gpu import releases
from drawb.gpu.releases import RELEASES, UnknownDriverRelease, detect, published_attributes, publishing, release

DEFAULT = build_scenario("default")
NUMA = '{minor: 0, pci: "0000:1b:00.0", root: pci0000:15}'


def _scenario(driver_release: str, numa: bool = False):
    text = (_default_text().replace("driver_release: v0.4", f"driver_release: {driver_release}"))
    if numa:
        text = text.replace(NUMA, NUMA[:-1] + ", numa: 1}")
    return _from_file("default", text, where="scenario 'releases'")


def _default_text() -> str:
    from importlib import resources

    return (resources.files("drawb.cluster.sim.scenarios") / "default.yaml").read_text()


def _h100(scenario):
    return next(s for s in scenario.resource_slices
                if s["spec"]["nodeName"] == "dgx-h100-02" and s["spec"]["driver"] == "gpu.nvidia.com")


@pytest.mark.parametrize("name", list(RELEASES))
def test_each_release_is_told_from_the_slices_it_publishes(name):
    scenario = _scenario(name, numa=name == "v0.5")
    assert detect(scenario.resource_slices).name == name
    assert published_attributes(scenario.resource_slices) <= RELEASES[name].attributes


def test_index_and_minor_exist_in_v25_3_alone_and_pci_bus_id_moves_in_v25_12():
    assert publishing("gpu.nvidia.com/index") == ["v25.3"]
    assert publishing("gpu.nvidia.com/minor") == ["v25.3"]
    assert publishing("gpu.nvidia.com/pcieBusID") == ["v25.3", "v25.8"]
    assert publishing("resource.kubernetes.io/pciBusID") == ["v25.12", "v0.4", "v0.5"]
    assert publishing("resource.kubernetes.io/numaNode") == ["v0.5"]
    old = _h100(_scenario("v25.3"))["spec"]["devices"]
    assert old[0]["attributes"]["index"] == {"int": 0} and "pcieBusID" in old[0]["attributes"]
    assert old[-1]["name"] == "gpu-7-mig-9-4-4" and "parentIndex" in old[-1]["attributes"]


def test_releases_name_mig_devices_and_slices_as_their_dra_library_does():
    assert _h100(_scenario("v25.12"))["metadata"]["name"].startswith("dgx-h100-02-gpu.nvidia.com-")
    new = _h100(_scenario("v0.4"))
    assert new["metadata"]["name"].startswith("00000-gpu.nvidia.com-dgx-h100-02-")
    assert new["spec"]["devices"][-1]["name"] == "gpu-7-mig-3g40gb-9-4"


def test_the_default_scenario_is_v0_4_and_numa_nodes_show_from_v0_5():
    assert detect(DEFAULT.resource_slices).name == "v0.4"
    assert _h100(DEFAULT) == _h100(_scenario("v0.4"))
    device = _h100(_scenario("v0.5", numa=True))["spec"]["devices"][0]
    assert device["attributes"]["resource.kubernetes.io/numaNode"] == {"int": 1}
    assert "resource.kubernetes.io/numaNode" not in _h100(_scenario("v0.4", numa=True))["spec"]["devices"][0]["attributes"]


def test_a_release_is_named_by_its_line_or_a_tag_and_an_unknown_one_is_refused_with_the_known():
    assert release("v25.12.0").name == release("25.12").name == "v25.12"
    assert release("v0.4.1-rc.1").name == "v0.4"
    with pytest.raises(UnknownDriverRelease, match="did you mean v25.8"):
        release("v25.9")
    with pytest.raises(ScenarioError, match="driver_release: unknown NVIDIA DRA driver release 'v9'") as err:
        _scenario("v9")
    assert "v25.3, v25.8, v25.12, v0.4, v0.5" in err.value.hint


def test_slices_of_no_nvidia_driver_or_of_an_unknown_shape_give_no_release():
    assert detect([s for s in DEFAULT.resource_slices if s["spec"]["driver"] != releases.DOMAIN]) is None
    odd = {"metadata": {"name": "x"}, "spec": {"driver": releases.DOMAIN, "devices": [
        {"name": "gpu-0", "attributes": {"somethingNew": {"string": "x"}}}]}}
    assert detect([odd]) is None
