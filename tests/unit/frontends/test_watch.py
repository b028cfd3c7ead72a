"""``--watch`` on the simulated cluster: a displayed table updated in place in a real IPython shell,
change lines on the real command line, and nothing left subscribed or running afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.displaypub import DisplayPublisher

from drawb.commands.registry import run_line
from drawb.commands.watching import WatchedTable, change_lines

DRAWB = Path(sys.executable).with_name("drawb")
IMAGE = "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"  # already on dgx-h100-02: the container starts in 1 s


class Recording(DisplayPublisher):
    """IPython's display publisher, keeping what was published (as a kernel would send it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.published: list[tuple[str | None, bool, str]] = []  # display id, update, the HTML table

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
        self.published.append(((transient or {}).get("display_id"), update, data.get("text/html", "")))


def row_of(html: str, name: str) -> str:
    """The HTML table row that names ``name``."""
    return next(row for row in html.split("<tr>") if f">{name}<" in row)


def short_pod(cluster, name: str = "watched", seconds: int = 2) -> None:
    """A pod with one GPU claim that runs ``seconds`` and succeeds."""
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": f"{name}-gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
           "spec": {"nodeSelector": {"kubernetes.io/hostname": "dgx-h100-02"}, "restartPolicy": "Never",
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"{name}-gpu"}],
                    "containers": [{"name": "c", "image": IMAGE, "command": ["sleep", str(seconds)],
                                    "resources": {"claims": [{"name": "gpu"}]}}]}}
    cluster.apply([template, pod])


@pytest.fixture
def recorded(shell):
    original = shell.ipython.display_pub
    shell.ipython.display_pub = recording = Recording(shell=shell.ipython)
    yield recording
    shell.ipython.display_pub = original


def session_of(shell):
    return shell.ipython.magics_manager.registry["DRAMagics"].session


def handler_counts(cluster) -> dict[str, int]:
    """Subscribed handlers per watched kind (``Kind/namespace`` for a watch of one namespace)."""
    return {kind if namespace is None else f"{kind}/{namespace}": len(watch._handlers)
            for (kind, namespace), watch in cluster._watches.items()}


def test_watch_updates_one_display_until_its_time_is_up(shell, recorded, capsys):
    cluster = session_of(shell).cluster
    short_pod(cluster)
    threads, handlers = set(threading.enumerate()), handler_counts(cluster)
    started = time.monotonic()
    assert shell.run("%dra pods --watch --for 3") is None
    took = time.monotonic() - started
    assert 3 <= took < 30  # stops at its time (the upper bound is loose: CI shares 2 cores with the suite)
    ids = {display_id for display_id, _, _ in recorded.published}
    assert len(ids) == 1 and None not in ids  # one display, with an id ...
    assert [update for _, update, _ in recorded.published][:2] == [False, True]  # ... shown, then updated
    first, last = recorded.published[0][2], recorded.published[-1][2]
    assert ">Pending<" in row_of(first, "watched") or ">Running<" in row_of(first, "watched")
    assert ">Succeeded<" in row_of(last, "watched")
    out = capsys.readouterr().out
    assert "watching pods on simulated cluster 'default' for 3 s" in out
    assert f"after {len(recorded.published) - 1} change(s)" in out
    assert set(threading.enumerate()) <= threads  # no thread left running
    assert handler_counts(cluster) == {**handlers, "Pod": 0}  # no handler left subscribed


def test_an_interrupt_stops_the_watch_cleanly(shell):
    session = session_of(shell)
    short_pod(session.cluster, "interrupted")
    handlers = handler_counts(session.cluster)
    table = run_line(session, "claims --watch")
    assert isinstance(table, WatchedTable) and table.seconds is None
    shown = []
    # the user interrupts the kernel while the watch waits for a change: a real SIGINT to this process
    timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):  # the front end reports it
        table.follow(lambda frame, previous: shown.append(frame))
    timer.join()
    assert 1.5 <= time.monotonic() - started < 15  # stopped by the interrupt, not by a timeout
    assert shown and "interrupted" in " ".join(shown[0]["name"])
    assert handler_counts(session.cluster) == {**handlers, "ResourceClaim": 0}


def test_devices_watch_sees_an_allocation(shell):
    session = session_of(shell)
    session.devices()  # the session's own live device frame subscribes for good
    handlers = handler_counts(session.cluster)
    table = run_line(session, "devices --node dgx-h100-02 --watch --for 2")
    frames = table.frames()
    first = next(frames)
    short_pod(session.cluster, "allocating")
    second = next(frames)
    frames.close()
    changed = change_lines(first, second, table.key)
    assert len(changed) == 1 and changed[0].startswith("~ dgx-h100-02/gpu.nvidia.com/")
    assert "claim:  -> default/allocating-gpu-" in changed[0] and "reserved_for:  -> allocating" in changed[0]
    assert "profile" not in changed[0]  # missing before and after: no change
    assert handler_counts(session.cluster) == handlers


def test_for_needs_watch(shell):
    assert shell.fails("%dra claims --for 5").startswith("UsageError: --for needs --watch")


def test_change_lines():
    before = pd.DataFrame({"namespace": ["a", "a"], "name": ["x", "y"], "state": ["pending", "allocated"]})
    after = pd.DataFrame({"namespace": ["a", "a"], "name": ["y", "z"], "state": ["reserved", "pending"]})
    assert change_lines(before, after, ("namespace", "name")) == [
        "- a/x", "~ a/y  state: allocated -> reserved", "+ a/z"]


def test_cli_watch_prints_the_table_and_stops_at_the_end_of_for():
    out = subprocess.run([str(DRAWB), "claims", "--watch", "--for", "1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split()[:3] == ["namespace", "name", "state"]


def test_cli_watch_stops_on_interrupt():
    proc = subprocess.Popen([str(DRAWB), "devices", "--watch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        header = proc.stdout.readline()
        assert header.split()[:3] == ["node", "driver", "device"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 130  # as every interrupted command
        assert proc.stderr.read().splitlines() == ["Interrupted: drawb devices stopped before it finished"]
    finally:
        proc.kill()
        proc.wait()


def test_a_watch_with_a_namespace_watches_that_namespace_alone(shell):
    session = session_of(shell)
    session.cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}}])
    table = run_line(session, "claims -n team-b --watch --for 5")
    assert table.namespace == "team-b"
    frames = table.frames()
    first = next(frames)
    assert handler_counts(session.cluster)["ResourceClaim/team-b"] == 1
    heard = []
    session.cluster.watch("ResourceClaim", "team-b").subscribe(lambda kind, obj: heard.append(obj["metadata"]))
    short_pod(session.cluster, "elsewhere")  # its claim is in namespace default: not heard
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "mine", "namespace": "team-b"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    session.cluster.apply([claim])
    second = next(frames)
    frames.close()
    assert [(m["namespace"], m["name"]) for m in heard] == [("team-b", "mine")]
    assert first.empty and list(second["name"]) == ["mine"]
    assert handler_counts(session.cluster)["ResourceClaim/team-b"] == 1  # only the test's own handler is left
