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


def test_magic_returns_the_verdict_and_prints_progress_into_the_cell(shell, capsys):
    verdict = shell.run("%dra check mig-profile --set profile=3g.40gb")
    printed = capsys.readouterr().out
    assert verdict.status == "PASS", verdict
    assert verdict.expected[0].profile == "3g.40gb"
    assert "] running " in printed and "MIG 3g.40gb" in printed
    assert "<b style='color:#1a7f37'>PASS</b>" in verdict._repr_html_()
