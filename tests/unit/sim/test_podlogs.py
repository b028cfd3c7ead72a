"""What the simulated node runs for a container's command."""

from __future__ import annotations

from drawb.cluster.sim.podlogs import NO_DEVICES, simulate
from drawb.cluster.sim.scenarios import build_scenario

WHEN = "Thu Jan  1 00:00:00 2026"


def _gpus(n: int) -> list[dict]:
    devices = next(s["spec"]["devices"] for s in build_scenario().resource_slices
                   if s["spec"]["nodeName"] == "hgx-h200-03" and s["spec"]["driver"] == "gpu.nvidia.com")
    return devices[:n]


def test_nvidia_smi_list_ends_with_zero():
    run = simulate(["nvidia-smi", "-L"], _gpus(2), WHEN)
    assert [line.split(" (")[0] for line in run.lines] == ["GPU 0: NVIDIA H200", "GPU 1: NVIDIA H200"]
    assert run.exit_code == 0 and run.seconds > 0


def test_no_gpu_is_exit_code_6():
    run = simulate(["nvidia-smi"], [], WHEN)
    assert run.lines == [NO_DEVICES] and run.exit_code == 6


def test_a_shell_script_runs_step_by_step():
    run = simulate(["sh", "-c", "echo start; nvidia-smi --query-gpu=index,name --format=csv,noheader && sleep 2"],
                   _gpus(1), WHEN)
    assert run.lines == ["start", "0, NVIDIA H200"] and run.exit_code == 0 and run.seconds == 2.5
    assert simulate(["bash", "-c", "false && echo no || echo yes"], [], WHEN).lines == ["yes"]
    assert simulate(["sh", "-c", "exit 3"], [], WHEN).exit_code == 3


def test_a_bad_query_fails_as_nvidia_smi_does():
    run = simulate(["nvidia-smi", "--query-gpu=bogus", "--format=csv"], _gpus(1), WHEN)
    assert run.lines == ['Field "bogus" is not a valid field to query.'] and run.exit_code == 2


def test_what_the_simulation_cannot_run_keeps_running():
    assert simulate(["python", "train.py"], _gpus(1), WHEN).exit_code is None
    assert simulate([], _gpus(1), WHEN).exit_code is None
    run = simulate(["sh", "-c", "nvidia-smi -L && sleep infinity"], _gpus(1), WHEN)
    assert len(run.lines) == 1 and run.exit_code is None
