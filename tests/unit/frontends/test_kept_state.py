"""The command line keeps the simulated cluster between commands: each command below is its own process
(``python -m drawb.cli`` with this checkout first on the path), the state folder the test's own
(``XDG_STATE_HOME``, set for every test by tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from drawb.cluster.sim.state import KeptState, clusters_dir, key_for

ROOT = Path(__file__).resolve().parents[3]

POD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: {name}}}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {{deviceClassName: gpu.nvidia.com}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  restartPolicy: Never
  resourceClaims: [{{name: gpu, resourceClaimTemplateName: {name}}}]
  containers:
  - name: main
    image: ubuntu:22.04
    command: ["sh", "-c", "nvidia-smi -L; sleep {seconds}"]
    resources: {{claims: [{{name: gpu}}]}}
"""


def drawb(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "drawb.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def start(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "drawb.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def ok(*args: str) -> str:
    out = drawb(*args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def pod_file(tmp_path: Path, name: str, seconds: float = 2) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(POD.format(name=name, seconds=seconds))
    return str(path)


def phase(pods_table: str, name: str) -> str | None:
    for line in pods_table.splitlines()[1:]:
        words = line.split()
        if words[1] == name:
            return words[3]
    return None


def test_apply_claims_logs_delete_in_separate_processes(tmp_path):
    applied = ok("apply", pod_file(tmp_path, "smi", seconds=3600))
    assert "Pod/smi" in applied
    claims = ok("claims")
    line = next(line for line in claims.splitlines() if " smi-gpu-" in line)
    assert "allocated,reserved" in line and "gpu.nvidia.com/" in line
    assert "GPU 0: NVIDIA " in ok("logs", "smi")
    ok("delete", "pod", "smi")
    assert phase(ok("pods"), "smi") is None
    assert " smi-gpu-" not in ok("claims")  # the garbage collector took the pod's claim with it


def test_simulated_time_goes_on_between_commands(tmp_path):
    ok("apply", pod_file(tmp_path, "short", seconds=2))
    deadline = time.monotonic() + 90  # its command sleeps 2 s of simulated time, which goes on with the clock
    while phase(ok("pods"), "short") != "Succeeded":
        assert time.monotonic() < deadline, "the pod never finished across commands"
        time.sleep(0.5)
    assert "GPU 0: NVIDIA " in ok("logs", "short")  # what it printed was kept


def test_another_state_folder_or_scenario_is_another_cluster(tmp_path, monkeypatch):
    ok("apply", pod_file(tmp_path, "mine"))
    assert phase(ok("--scenario", "synthetic:2", "pods"), "mine") is None  # one state per scenario
    assert phase(ok("--kubernetes-version", "1.36", "pods"), "mine") is None  # and per version
    assert phase(ok("pods"), "mine") is not None
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "elsewhere"))
    assert phase(ok("pods"), "mine") is None


def test_connect_reset_starts_afresh(tmp_path):
    ok("apply", pod_file(tmp_path, "old"))
    kept = ok("connect")
    assert "as the last command left it" in kept and str(clusters_dir()) in kept
    reset = ok("connect", "--reset")
    assert "started afresh" in reset
    assert phase(ok("pods"), "old") is None
    assert phase(ok("pods"), "trainer") is not None  # the scenario's own workloads are back


def test_commands_at_once_take_turns_and_lose_nothing(tmp_path):
    names = [f"pod-{i}" for i in range(4)]
    runs = [start("apply", pod_file(tmp_path, name, seconds=60)) for name in names]
    for run in runs:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    table = ok("pods")
    assert all(phase(table, name) is not None for name in names), table
    claims = ok("claims")
    assert all(f" {name}-gpu-" in claims for name in names)


def test_a_command_waits_for_the_one_holding_the_cluster(tmp_path):
    ok("connect")
    held = KeptState(key_for("default", None, None, None))
    held.acquire()
    try:
        waiting = start("apply", pod_file(tmp_path, "late"))
        time.sleep(4)
        assert waiting.poll() is None, "it did not wait for the lock"
    finally:
        held.release()
    _, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, err
    assert "Waiting for " in err and "to finish with the simulated cluster kept in" in err
    assert phase(ok("pods"), "late") is not None


def test_state_files_save_and_load_on_the_command_line(tmp_path):
    ok("apply", pod_file(tmp_path, "saved"))
    saved = tmp_path / "mine.state"
    assert "Saved simulated cluster 'default'" in ok("state", "save", str(saved))
    ok("connect", "--reset")
    assert phase(ok("pods"), "saved") is None
    loaded = ok("state", "load", str(saved))
    assert "Loaded simulated cluster 'default'" in loaded
    assert phase(ok("pods"), "saved") is not None  # kept from then on


@pytest.mark.parametrize("content", [b"", b"not a state file\n", b"drawb simulated cluster state\n{}\n"])
def test_a_file_that_is_no_state_is_refused_by_name(tmp_path, content):
    bad = tmp_path / "bad.state"
    bad.write_bytes(content)
    out = drawb("state", "load", str(bad))
    assert out.returncode == 2 and "NotAStateFile" in out.stderr and "Traceback" not in out.stderr
    assert phase(ok("pods"), "trainer") is not None  # the kept cluster is untouched


def test_a_watch_lets_go_of_the_cluster_once_it_has_its_table(tmp_path):
    ok("connect")
    watcher = start("pods", "--watch", "--for", "120")
    try:
        assert "namespace" in watcher.stdout.readline()  # its first table's header: it has the cluster it follows
        out = drawb("apply", pod_file(tmp_path, "meanwhile"), timeout=60)
        assert out.returncode == 0 and "Waiting for " not in out.stderr, out.stderr
    finally:
        watcher.kill()
        watcher.communicate()
    assert phase(ok("pods"), "meanwhile") is not None


def test_a_state_folder_drawb_cannot_write_is_named(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "a-file"))
    out = drawb("claims")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"StateError: cannot keep the simulated cluster in {tmp_path}/a-file/drawb/clusters: Not a directory" \
        in out.stderr and "Hint: set $XDG_STATE_HOME to a folder you can write to" in out.stderr
    assert drawb("validate", "--no-cluster", pod_file(tmp_path, "fine")).returncode == 0  # no cluster, no state
