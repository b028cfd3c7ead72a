"""Read commands: -o yaml, one object by name, pods --all, nodes, events KIND/NAME, and -n/-A everywhere."""

from __future__ import annotations

import yaml

from drawb.cli import main


def test_yaml_output_shows_one_object_whole(shell):
    text = shell.run("%dra classes gpu.nvidia.com -o yaml")
    [doc] = list(yaml.safe_load_all(str(text)))
    assert doc["kind"] == "DeviceClass" and doc["metadata"]["name"] == "gpu.nvidia.com"
    assert "gpu.nvidia.com" in doc["spec"]["selectors"][0]["cel"]["expression"]
    err = shell.fails("%dra classes gpu.nvidia.cmo")
    assert err.splitlines() == ["UsageError: no DeviceClass named 'gpu.nvidia.cmo'", "Hint: did you mean 'gpu.nvidia.com'?"]


def test_command_line_yaml_output(capsys):
    assert main(["claims", "-n", "gpu-demo", "notebook-mig", "-o", "yaml"]) == 0
    [doc] = list(yaml.safe_load_all(capsys.readouterr().out))
    assert doc["kind"] == "ResourceClaim" and doc["metadata"]["namespace"] == "gpu-demo"


def test_pods_all_shows_device_plugin_requests(shell):
    shell.run("%dra connect")
    cluster = shell.ipython.magics_manager.registry["DRAMagics"].session.cluster
    cluster.apply([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plugin-pod", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "ubuntu",
                                             "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}])
    frame = shell.run("%dra pods --all").set_index("pod")
    assert frame.loc["plugin-pod", "nvidia_gpu"] == 2 and frame.loc["plugin-pod", "claims"] == []
    assert frame["nvidia_gpu"].isna().sum() == len(frame) - 1  # <NA>, never nan, for pods that ask for none
    assert "plugin-pod" not in set(shell.run("%dra pods")["pod"])


def test_nodes_show_dra_devices_beside_allocatable(shell):
    frame = shell.run("%dra nodes").set_index("node")
    assert frame.loc["dgx-h100-02", "dra_gpus"] == 18  # 4 full GPUs and 14 MIG devices
    assert "gpu.nvidia.com" in frame.loc["dgx-h100-02", "dra_drivers"]
    assert str(frame["nvidia_gpu_allocatable"].dtype) == "Int64"


def test_events_about_one_object(shell):
    shell.run("%dra connect")
    frame = shell.run("%dra events -n gpu-demo pod/trainer")
    assert set(frame["object"]) <= {"pod/trainer"}
    err = shell.fails("%dra events gadget/x")
    assert err.splitlines()[0] == "UsageError: unknown kind 'gadget'"


def test_namespace_option_is_honoured_by_read_commands(shell):
    assert set(shell.run("%dra claims")["namespace"]) == {"gpu-demo"}  # the option unset: every namespace
    shell.run("%config DRAMagics.namespace = 'gpu-test'")
    assert shell.run("%dra claims").empty
    assert set(shell.run("%dra claims -A")["namespace"]) == {"gpu-demo"}
    assert set(shell.run("%dra claims -n gpu-demo")["namespace"]) == {"gpu-demo"}
    err = shell.fails("%dra claims -n gpu-demo -A")
    assert err.startswith("UsageError: -n and -A contradict each other")


def test_command_line_global_and_subcommand_namespace_mean_the_same(capsys):
    assert main(["-n", "gpu-test", "claims"]) == 0
    assert capsys.readouterr().out.strip() == "(no rows)"
    assert main(["claims", "-n", "gpu-test"]) == 0
    assert capsys.readouterr().out.strip() == "(no rows)"
    assert main(["--namespce", "x", "claims"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("UsageError: drawb: unrecognized arguments") or err.startswith("UsageError: drawb:")
