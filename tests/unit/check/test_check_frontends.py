"""``drawb check`` and ``%dra check`` on the simulated cluster: stages as they happen, the verdict, exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DRAWB = Path(sys.executable).with_name("drawb")


def drawb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), *args], capture_output=True, text=True, timeout=180)


def test_cli_pass_prints_stages_and_log_on_stderr_and_exits_0():
    out = drawb("check", "single-gpu", "--json")
    assert out.returncode == 0, out.stderr
    verdict = json.loads(out.stdout)
    assert verdict["status"] == "PASS" and verdict["cluster"] == "simulated cluster 'default'"
    assert verdict["cleanedUp"] and verdict["expected"][0]["uuid"].startswith("GPU-")
    assert "] allocated " in out.stderr and "  | GPU 0: " in out.stderr and "] verdict    PASS" in out.stderr


def test_cli_timeout_exits_1_with_the_schedulers_reason():
    out = drawb("check", "--selector", "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B300'",
                "--timeout", "2")
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith("TIMEOUT: never scheduled after 2 s: 0/4 nodes are available:")
    assert "cannot allocate all claims" in out.stdout


def test_magic_returns_the_check_runner_with_the_verdict_and_the_streamed_log(shell):
    runner = shell.run("%dra check mig-profile --set profile=3g.40gb")
    verdict = runner.verdict
    assert verdict.status == "PASS", verdict
    assert verdict.expected[0].profile == "3g.40gb"
    assert "running" in [stage for _, stage, _ in runner.stages] and "MIG 3g.40gb" in runner.log_text
    assert "<b style='color:#1a7f37'>PASS</b>" in verdict._repr_html_()
    assert "<b style='color:#1a7f37'>PASS</b>" in runner._title.value
    assert runner._stage_table.value.count("<tr>") == len(runner.stages) + 1  # with the header row
    assert "MIG 3g.40gb" in runner._log_box.value
    assert runner._verdict_box.value.startswith(verdict._repr_html_()) and "cleaned up: Pod/" in runner._verdict_box.value
    assert repr(runner).splitlines()[0].startswith("%dra check mig-profile --set profile=3g.40gb: PASS")
