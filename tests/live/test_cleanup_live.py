"""Killed and interrupted checks on the real control plane: ``cleanup`` removes what a killed check left
(its pod, claim template and the claim made from it) and leaves a running check alone; an interrupted
check cleans up itself and ends with one line and status 130. Both checks wait pending (no node has
12 or 16 GPUs), so each is killed or interrupted at a known stage."""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from drawb.check.manifests import RUN_LABEL
from drawb.cluster.protocol import MANAGED_BY_LABEL
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for

pytestmark = pytest.mark.live

DRAWB = Path(sys.executable).with_name("drawb")
KINDS = ("Pod", "ResourceClaim", "ResourceClaimTemplate")


class Drawb:
    """A ``drawb`` process whose stderr lines are read as they come."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen([str(DRAWB), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [self._queue.put(line.rstrip("\n")) for line in self.proc.stderr],
                         daemon=True).start()

    def wait_for_line(self, pattern: str, timeout: float = 180) -> re.Match:
        while True:
            for line in self.lines:
                found = re.search(pattern, line)
                if found:
                    return found
            self.lines.append(self._queue.get(timeout=timeout))

    def rest(self) -> list[str]:
        while not self._queue.empty():
            self.lines.append(self._queue.get())
        return self.lines


def run_objects(api, namespace: str, run: str) -> set[tuple[str, str]]:
    return {(kind, o["metadata"]["name"]) for kind in KINDS for o in api.request("GET", path_for(kind, None, namespace))
            ["items"] if (o["metadata"].get("labels") or {}).get(RUN_LABEL) == run}


def test_cleanup_removes_a_killed_checks_objects_and_leaves_a_running_check(control_plane, namespace):
    """Four checks at once: two that pass, one interrupted, one killed; afterwards and after cleanup, nothing
    of theirs remains and no claim of theirs holds a device."""
    api, kubeconfig = control_plane.api(), str(control_plane.kubeconfig)
    running = Drawb("--kubeconfig", kubeconfig, "check", "-n", namespace, "--count", "16", "--timeout", "300")
    killed = Drawb("--kubeconfig", kubeconfig, "check", "-n", namespace, "--count", "12", "--timeout", "300")
    passing = [Drawb("--kubeconfig", kubeconfig, "check", "-n", namespace, "--timeout", "120") for _ in range(2)]
    try:
        running_run = running.wait_for_line(r"\(run (\w+)\)")[1]
        running.wait_for_line(r"\] pending ")  # no node has 16 GPUs: it waits
        killed_run = killed.wait_for_line(r"\(run (\w+)\)")[1]
        killed.wait_for_line(r"\] pending ")
        killed.proc.send_signal(signal.SIGKILL)
        killed.proc.wait(timeout=30)
        left = run_objects(api, namespace, killed_run)
        assert {kind for kind, _ in left} == set(KINDS), left  # the claim made from its template too
        claims = [o for o in api.request("GET", path_for("ResourceClaim", None, namespace))["items"]
                  if (o["metadata"].get("labels") or {}).get(RUN_LABEL) == killed_run]
        assert [c["metadata"]["labels"][MANAGED_BY_LABEL] for c in claims] == ["drawb"]  # from the template

        listed = subprocess.run([str(DRAWB), "--kubeconfig", kubeconfig, "cleanup", "-n", namespace, "--dry-run"],
                                capture_output=True, text=True, timeout=120)
        assert listed.returncode == 0, listed.stderr
        assert "of 1 killed run(s)" in listed.stderr and "would be removed" in listed.stderr
        assert killed_run in listed.stdout and running_run not in listed.stdout
        assert run_objects(api, namespace, killed_run) == left  # a dry run removes nothing

        removed = subprocess.run([str(DRAWB), "--kubeconfig", kubeconfig, "cleanup", "-n", namespace],
                                 capture_output=True, text=True, timeout=120)
        assert removed.returncode == 0 and "removed " in removed.stderr, removed.stderr
        wait_for(lambda: not run_objects(api, namespace, killed_run), timeout=60, what="the killed check's objects gone")
        assert {kind for kind, _ in run_objects(api, namespace, running_run)} >= {"Pod", "ResourceClaimTemplate"}

        running.proc.send_signal(signal.SIGINT)
        assert running.proc.wait(timeout=60) == 130
        lines = running.rest()
        assert lines[-1] == "Interrupted: drawb check stopped before it finished"
        assert lines[-2].startswith("cleaned up Pod/") and not [line for line in lines if "Traceback" in line]
        wait_for(lambda: not run_objects(api, namespace, running_run), timeout=60, what="the interrupted check's objects gone")

        for check in passing:
            assert check.proc.wait(timeout=180) == 0, check.rest()
        runs = [check.wait_for_line(r"\(run (\w+)\)")[1] for check in passing] + [running_run, killed_run]
        wait_for(lambda: not any(run_objects(api, namespace, run) for run in runs), timeout=60,
                 what="nothing of the four checks left")
        held = [c["metadata"]["name"] for c in api.request("GET", path_for("ResourceClaim", "", namespace))["items"]
                if (c.get("status") or {}).get("allocation")]
        assert held == []  # no device held
        labelled = [(kind, o["metadata"]["name"]) for kind in KINDS
                    for o in api.request("GET", path_for(kind, None, namespace))["items"]
                    if (o["metadata"].get("labels") or {}).get(MANAGED_BY_LABEL) == "drawb"]
        assert labelled == []  # nothing drawb labelled, whichever run made it
    finally:
        for proc in (running.proc, killed.proc, *(check.proc for check in passing)):
            proc.kill()
            proc.wait()
