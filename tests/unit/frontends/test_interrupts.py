"""Interrupts and exit statuses: Ctrl-C ends a command with one line and status 130, after its cleanup.

The command line runs as a real process and gets a real SIGINT; the magic runs in a real Jupyter kernel (its
own process, interrupted the way a notebook's *Interrupt kernel* does it) and in a real IPython shell in this
process, which sends itself the SIGINT that *Interrupt kernel* sends.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from IPython.core.displaypub import DisplayPublisher
from jupyter_client.manager import start_new_kernel

from drawb.notebook.magics import CommandInterrupted

DRAWB = Path(sys.executable).with_name("drawb")
# A check that waits for as long as its --timeout: no node of the simulated cluster has 16 GPUs.
CHECK = ["check", "--count", "16", "--timeout", "60"]
WAITING = "] pending    "


def interrupted_when(args: list[str], ready: str) -> tuple[int, list[str], str]:
    """Run ``drawb args`` and send it SIGINT once a line of its stderr contains ``ready``; its status, the
    lines of its stderr and its stdout."""
    proc = subprocess.Popen([str(DRAWB), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line.rstrip("\n")) for line in proc.stderr], daemon=True)
    reader.start()
    err: list[str] = []
    try:
        while not any(ready in line for line in err):
            err.append(lines.get(timeout=120))
        proc.send_signal(signal.SIGINT)
        status = proc.wait(timeout=30)
        out = proc.stdout.read()
        reader.join(timeout=10)
        while not lines.empty():
            err.append(lines.get())
    finally:
        proc.kill()
        proc.wait()
    return status, err, out


def test_an_interrupted_check_cleans_up_then_says_so_in_one_line():
    status, err, out = interrupted_when(CHECK, WAITING)
    assert status == 130
    assert err[-1] == "Interrupted: drawb check stopped before it finished"
    assert err[-2].startswith("cleaned up Pod/drawb-check-")  # the check's own cleanup ran first
    assert "Traceback" not in "\n".join(err) and sum("Interrupted" in line for line in err) == 1
    assert out == ""  # no verdict


def test_traceback_adds_the_traceback_and_keeps_the_status():
    status, err, _ = interrupted_when(["--traceback", *CHECK], WAITING)
    assert status == 130 and err[-1] == "Interrupted: drawb check stopped before it finished"
    assert "Traceback (most recent call last):" in err and "KeyboardInterrupt" in err

    plain = subprocess.run([str(DRAWB), "devices", "--node", "nope"], capture_output=True, text=True, timeout=120)
    traced = subprocess.run([str(DRAWB), "--traceback", "devices", "--node", "nope"], capture_output=True, text=True,
                            timeout=120)
    assert plain.returncode == traced.returncode == 2
    assert "Traceback" not in plain.stderr and "Traceback (most recent call last):" in traced.stderr
    assert traced.stderr.endswith(plain.stderr)  # the same named error and hint, after the traceback


def test_an_interrupted_kernel_fails_the_cell_with_one_line_and_runs_the_next():
    """A real kernel runs ``%dra check`` until its stages show the pod pending, then gets *Interrupt kernel*: the
    cell's error is the one line, the check's pod is gone, and the kernel runs the next cell."""
    manager, client = start_new_kernel(startup_timeout=180)  # this environment's python, the test's state folder
    try:
        assert client.execute_interactive("%load_ext drawb", timeout=180)["content"]["status"] == "ok"
        cell = client.execute(f"%dra {' '.join(CHECK)}")
        interrupted_at, error = None, None
        while True:
            message = client.get_iopub_msg(timeout=120)
            if message["parent_header"].get("msg_id") != cell:
                continue
            kind, content = message["msg_type"], message["content"]
            if interrupted_at is None and kind == "comm_msg" and ">pending<" in json.dumps(content):
                manager.interrupt_kernel()  # the stages table shows the pod pending: the check waits
                interrupted_at = "pending"
            elif kind == "error":
                error = content
            elif kind == "status" and content["execution_state"] == "idle":
                break
        assert interrupted_at == "pending"
        assert error is not None and error["ename"] == "CommandInterrupted", error
        assert error["traceback"] == ["Interrupted: %dra check stopped before it finished"]
        after = client.execute_interactive(
            "session = get_ipython().magics_manager.registry['DRAMagics'].session", timeout=60,
            user_expressions={"left": "[p['metadata']['name'] for p in session.cluster.list('Pod') "
                                       "if p['metadata']['name'].startswith('drawb-check-')]"})
        assert after["content"]["status"] == "ok", after["content"]
        assert after["content"]["user_expressions"]["left"]["data"]["text/plain"] == "[]"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def interrupt_this_process_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


class _InterruptOnceWritten(threading.Thread):
    """SIGINT to this process once the simulated cluster has stored ``count`` more objects (mid-apply, whatever
    the host's speed); never after ``stop``."""

    def __init__(self, cluster, count: int) -> None:
        super().__init__(daemon=True)
        self.cluster, self.target, self.done = cluster, cluster.writes + count, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.002):
            if self.cluster.writes >= self.target:
                os.kill(os.getpid(), signal.SIGINT)
                return

    def stop(self) -> None:
        self.done.set()
        self.join()


def interrupt_this_process_once_written(cluster, count: int) -> _InterruptOnceWritten:
    watcher = _InterruptOnceWritten(cluster, count)
    watcher.start()
    return watcher


def test_an_interrupted_magic_fails_its_cell_with_one_line(shell):
    timer = interrupt_this_process_after(2.0)
    result = shell.ipython.run_cell(f"%dra {' '.join(CHECK)}", store_history=False)
    timer.join()
    error = result.error_in_exec
    assert isinstance(error, CommandInterrupted) and isinstance(error, KeyboardInterrupt)
    assert error._render_traceback_() == ["Interrupted: %dra check stopped before it finished"]
    session = shell.ipython.magics_manager.registry["DRAMagics"].session
    assert not [p for p in session.cluster.list("Pod") if p["metadata"]["name"].startswith("drawb-check-")]


def test_an_interrupted_magic_watch_ends_its_cell_normally(shell, capsys):
    timers = []

    class InterruptOnceShown(DisplayPublisher):
        def publish(self, *args, **kwargs):
            if not timers:  # the table is on screen: the user interrupts the kernel
                timers.append(interrupt_this_process_after(0.5))

    original, shell.ipython.display_pub = shell.ipython.display_pub, InterruptOnceShown(shell=shell.ipython)
    try:
        assert shell.run("%dra claims --watch") is None
    finally:
        shell.ipython.display_pub = original
    timers[0].join()
    assert capsys.readouterr().out.splitlines()[-1] == "stopped watching claims after 0 change(s)"


def test_the_magic_keeps_the_traceback_when_short_errors_are_off(shell):
    shell.run("%config DRAMagics.short_errors = False")
    timer = interrupt_this_process_after(1.5)
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            shell.run(f"%dra {' '.join(CHECK)}")
    finally:
        timer.join()
        shell.run("%config DRAMagics.short_errors = True")
    assert type(caught.value) is KeyboardInterrupt


def test_an_interrupted_magic_apply_writes_nothing_and_says_so(shell, tmp_path):
    """*Interrupt kernel* during ``%dra apply`` of 3,000 claims, once 100 are stored: none of them is left, and the
    cell's lines say what was rolled back, then that it stopped."""
    claim = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c-{i}\n  namespace: default\n"
             "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n")
    manifest = tmp_path / "claims.yaml"
    manifest.write_text("---\n".join(claim.format(i=i) for i in range(3000)))
    shell.run("%dra connect")  # before the interrupt: it comes while the apply writes
    session = shell.ipython.magics_manager.registry["DRAMagics"].session
    watcher = interrupt_this_process_once_written(session.cluster, 100)
    result = shell.ipython.run_cell(f"%dra apply {manifest}", store_history=False)
    watcher.stop()
    error = result.error_in_exec
    assert isinstance(error, CommandInterrupted), error
    lines = error._render_traceback_()
    assert lines[-1] == "Interrupted: %dra apply stopped before it finished" and len(lines) == 2, lines
    assert lines[0].startswith("rolled back: the "), lines
    assert not [c for c in session.cluster.list("ResourceClaim", "default") if c["metadata"]["name"].startswith("c-")]
