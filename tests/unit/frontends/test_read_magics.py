"""The read subcommands through a real IPython shell, on the simulated cluster."""

from __future__ import annotations

import pandas as pd
import pytest


def test_devices_shows_the_38_gpu_and_mig_devices(shell):
    frame = shell.run("%dra devices --driver gpu.nvidia.com")
    assert isinstance(frame, pd.DataFrame)
    assert len(frame) == 38
    assert {"node", "device", "product", "memory", "profile"} <= set(frame.columns)
    assert frame["type"].value_counts().to_dict() == {"gpu": 24, "mig": 14}
    h200 = frame[frame["product"] == "NVIDIA H200"]
    assert set(h200["node"]) == {"hgx-h200-03"} and set(h200["memory"]) == {"143771Mi"}


def test_devices_result_can_be_assigned(shell):
    shell.run("devs = %dra devices --wide")
    devs = shell.get("devs")
    assert "gpu.nvidia.com/productName" in devs.columns
    assert "capacity:gpu.nvidia.com/memory:value" in devs.columns
    assert len(devs) == 38 + 8  # GPU devices plus compute-domain channel/daemon devices


def test_devices_filters(shell):
    migs = shell.run("%dra devices --node dgx-h100-02 --type mig")
    assert len(migs) == 14 and set(migs["profile"]) == {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"}
    assert len(shell.run("%dra devices --driver compute-domain.nvidia.com")) == 8


def test_devices_show_who_holds_them(shell):
    frame = shell.run("%dra devices --node hgx-h200-03")
    held = frame[frame["claim"].notna()]
    assert held[["device", "claim"]].values.tolist() == [["gpu-0", "gpu-demo/trainer-gpu-x7k2p"]]


def test_a_filter_that_matches_nothing_says_what_exists(shell, capsys):
    err = shell.fails("%dra devices --node nope")
    assert err.startswith("UsageError: no device has node 'nope'")
    assert "hgx-h200-03" in err


@pytest.mark.parametrize(
    "line,rows,column",
    [
        ("%dra slices", 8, "pool"),
        ("%dra slices --driver gpu.nvidia.com", 4, "generation"),
        ("%dra classes", 5, "selectors"),
        ("%dra claims", 2, "state"),
        ("%dra claims -n nowhere", 0, "state"),
        ("%dra pods", 2, "resource_claims"),
        ("%dra attrs --driver gpu.nvidia.com", None, "type"),
    ],
)
def test_read_commands_return_frames(shell, line, rows, column):
    frame = shell.run(line)
    assert isinstance(frame, pd.DataFrame) and column in frame.columns
    if rows is not None:
        assert len(frame) == rows


def test_attrs_lists_types_per_attribute(shell):
    frame = shell.run("%dra attrs --driver gpu.nvidia.com").set_index("name")
    assert frame.loc["gpu.nvidia.com/cudaComputeCapability", "type"] == "version"
    assert frame.loc["gpu.nvidia.com/productName", "type"] == "string"
    assert frame.loc["gpu.nvidia.com/memory", "kind"] == "capacity"


def test_synthetic_scenario_by_config(shell):
    shell.run("%config DRAMagics.scenario = 'synthetic:6x10'")
    assert len(shell.run("%dra devices --driver gpu.nvidia.com")) == 60


def _malformed_slice(shell) -> None:
    cluster = shell.ipython.magics_manager.registry["DRAMagics"].session.cluster
    good = next(s for s in cluster.list("ResourceSlice") if s["spec"]["driver"] == "gpu.nvidia.com")
    bad = {**good, "metadata": {"name": "bad-slice"}, "spec": {**good["spec"], "pool": {**good["spec"]["pool"], "name": "bad"}}}
    bad["spec"]["devices"] = [dict(d) for d in good["spec"]["devices"][:2]]
    bad["spec"]["devices"][0]["capacity"] = {"memory": {"value": "40GB"}}
    bad["spec"]["devices"][1]["attributes"] = "oops"
    cluster._store(bad)  # straight into the store: the simulated API server, like a real one, refuses it on apply


def test_a_malformed_slice_is_named_and_loses_nothing_else(shell, capsys):
    shell.run("%dra connect")
    _malformed_slice(shell)
    frame = shell.run("%dra devices --driver gpu.nvidia.com")
    err = capsys.readouterr().err
    assert err.startswith("MalformedObjects: 2 problem(s) while reading objects; everything else is shown:")
    assert "ResourceSlice 'bad-slice' spec.devices[0].capacity.memory.value: '40GB' is not a quantity" in err
    assert "ResourceSlice 'bad-slice' spec.devices[1].attributes" in err
    assert len(frame) == 38 + 2  # both devices of the bad slice are still rows
    assert "Traceback" not in err


def test_devices_of_a_device_class(shell, capsys):
    migs = shell.run("%dra devices --class mig.nvidia.com")
    assert len(migs) == 14 and set(migs["type"]) == {"mig"}
    gpus = shell.run("%dra devices --class gpu.nvidia.com")
    assert len(gpus) == 24 and set(gpus["type"]) == {"gpu"}
    assert "UsageError: no DeviceClass 'nope'" in shell.fails("%dra devices --class nope")


def test_devices_of_a_class_whose_selector_errors_reports_them_as_select_does(shell, capsys):
    cluster = shell.ipython.magics_manager.registry["DRAMagics"].session.cluster
    profile = 'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'
    cluster.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "small-mig.example.com"},
                    "spec": {"selectors": [{"cel": {"expression": profile}}]}}])
    devices = shell.run("%dra devices --class small-mig.example.com")
    err = capsys.readouterr().err
    selected = shell.run("%%dra select --class small-mig.example.com\ntrue\n")
    assert len(devices) == selected.match_count == 9
    assert err.startswith(f"SelectorErrors: {selected.error_count} device(s) error in the selectors")
    assert selected.error_count == 32 and "no such key: profile" in err
