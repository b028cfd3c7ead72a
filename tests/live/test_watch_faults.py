"""KubeCluster's informers under real faults: every frame stays equal to a fresh list.

One control plane of its own (its API server is restarted and its etcd compacted), reached through
a loopback TCP proxy the tests cut. Its API server keeps no watch cache for ResourceSlices
(``--watch-cache-sizes=resourceslices.resource.k8s.io#0``): slice watches then read etcd, so
compacting etcd past a watch's resourceVersion makes the resumed watch get the real 410 Gone (with
the cache, the API server answers from its own window of recent events, whatever etcd keeps).
ResourceClaims and Pods keep the default watch cache, which a restart rebuilds.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pytest
import yaml

from drawb.cluster.kube import KubeCluster
from drawb.cluster.kube.informer import object_key
from drawb.commands.registry import run_line
from drawb.session import Session
from drawb.testing.api import path_for
from drawb.testing.tcpproxy import TcpProxy
from drawb.testing.waiting import wait_for

pytestmark = pytest.mark.live

WATCHED = ("ResourceSlice", "ResourceClaim", "Pod")
DRIVER = "faults.drawb.example"


@pytest.fixture(scope="module")
def plane(start_control_plane):
    cp = start_control_plane(apiserver_args={"watch-cache-sizes": "resourceslices.resource.k8s.io#0"})
    yield cp
    cp.cluster.down()


@pytest.fixture(scope="module")
def proxy(plane):
    server = urlsplit(yaml.safe_load(plane.kubeconfig.read_text())["clusters"][0]["cluster"]["server"])
    tcp = TcpProxy((server.hostname, server.port))
    yield tcp
    tcp.close()


def proxied_kubeconfig(plane, proxy, tmp_path: Path) -> str:
    """The cluster's kubeconfig, with the server at the proxy (same certificate: both are 127.0.0.1)."""
    config = yaml.safe_load(plane.kubeconfig.read_text())
    for entry in config["clusters"]:
        entry["cluster"]["server"] = f"https://{proxy.address}"
    path = tmp_path / "proxied.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return str(path)


class Recorder:
    """Counts the events a handler gets and checks each against the objects it has been told about."""

    def __init__(self, watch):
        self.counts: Counter = Counter()
        self.problems: list[str] = []
        self.known: dict[str, str] = {}
        self.known = {object_key(o): o["metadata"]["resourceVersion"] for o in watch.subscribe(self)}

    def __call__(self, event_type: str, obj: dict) -> None:
        key, version = object_key(obj), obj["metadata"]["resourceVersion"]
        self.counts[(event_type, key)] += 1
        if event_type == "ADDED" and key in self.known:
            self.problems.append(f"ADDED {key} already known")
        if event_type in ("MODIFIED", "DELETED") and key not in self.known:
            self.problems.append(f"{event_type} {key} never added")
        if event_type == "MODIFIED" and self.known.get(key) == version:
            self.problems.append(f"MODIFIED {key} repeated at version {version}")
        if event_type == "DELETED":
            self.known.pop(key, None)
        else:
            self.known[key] = version

    def ours(self) -> Counter:
        return Counter({k: n for k, n in self.counts.items() if k[1].startswith("faults-")})


@pytest.fixture
def watched(plane, proxy, tmp_path):
    """A KubeCluster through the proxy, watching slices, claims and pods; a Recorder on its slices."""
    proxy.refuse(False)
    kube = KubeCluster(kubeconfig=proxied_kubeconfig(plane, proxy, tmp_path), max_backoff_s=1.0)
    for kind in WATCHED:
        kube.watch(kind)
    recorder = Recorder(kube.watch("ResourceSlice"))
    yield kube, recorder
    kube.close()
    for obj in plane.api().request("GET", path_for("ResourceSlice"))["items"]:
        if obj["metadata"]["name"].startswith("faults-"):
            plane.api().delete(path_for("ResourceSlice", obj["metadata"]["name"]))


def a_slice(name: str, devices: int = 2, model: str = "A") -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {"driver": DRIVER, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                 "allNodes": True,
                 "devices": [{"name": f"dev-{i}", "attributes": {"model": {"string": model}}} for i in range(devices)]},
    }


def change(plane, name: str, model: str) -> None:
    api = plane.api()
    obj = api.get(path_for("ResourceSlice", name))
    for device in obj["spec"]["devices"]:
        device["attributes"]["model"] = {"string": model}
    api.request("PUT", path_for("ResourceSlice", name), body=obj)


def churn(plane, stem: str) -> None:
    """Three slices added, one changed, one deleted."""
    api = plane.api()
    for i in range(3):
        api.create(a_slice(f"faults-{stem}-{i}"))
    change(plane, f"faults-{stem}-1", "B")
    api.delete(path_for("ResourceSlice", f"faults-{stem}-2"))


def churn_seen(recorder: Recorder, stem: str) -> Counter:
    """What the slices' handler must have heard of churn(stem): the live watch hears every step; a
    re-list may fold adding and changing into one ADDED, and adding then deleting into nothing."""
    return Counter({k: n for k, n in recorder.ours().items() if f"-{stem}-" in k[1]})


def sorted_frame(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("driver", "pool", "node", "device", "name", "namespace") if c in frame.columns]
    frame = frame.astype(str).sort_values(keys).reset_index(drop=True)
    return frame[sorted(frame.columns)]


def assert_equal_to_fresh_list(plane, kube: KubeCluster) -> None:
    """Every store equals a fresh list, and every read command's frame equals one made from it."""
    fresh = KubeCluster(kubeconfig=str(plane.kubeconfig))  # straight to the API server, no watch
    try:
        def stores_match() -> bool:
            return all({object_key(o): o for o in kube.list(kind)} == {object_key(o): o for o in fresh.list(kind)}
                       for kind in WATCHED)

        wait_for(stores_match, timeout=30, interval=0.2, what="every store equal to a fresh list")
        live_session, fresh_session = Session(_cluster=kube), Session(_cluster=fresh)
        for line in ("devices --wide", "slices", "claims", "pods"):
            live, listed = run_line(live_session, line), run_line(fresh_session, line)
            pd.testing.assert_frame_equal(sorted_frame(live), sorted_frame(listed), obj=line)
    finally:
        fresh.close()


def test_slices_added_changed_and_deleted(plane, watched):
    kube, recorder = watched
    churn(plane, "plain")
    assert_equal_to_fresh_list(plane, kube)
    assert churn_seen(recorder, "plain") == Counter({
        ("ADDED", "faults-plain-0"): 1, ("ADDED", "faults-plain-1"): 1, ("MODIFIED", "faults-plain-1"): 1,
        ("ADDED", "faults-plain-2"): 1, ("DELETED", "faults-plain-2"): 1})
    assert recorder.problems == []


def test_a_dropped_connection_resumes_without_loss(plane, proxy, watched):
    kube, recorder = watched
    informer = kube.watch("ResourceSlice")
    watches = informer.stats["watches"]
    proxy.refuse(True)
    assert proxy.cut() >= len(WATCHED)  # every watch's connection
    churn(plane, "cut")  # while drawb cannot reach the server
    time.sleep(1.5)
    proxy.refuse(False)
    assert_equal_to_fresh_list(plane, kube)
    assert informer.stats["watches"] > watches and informer.stats["failures"] >= 1
    assert informer.stats["expired"] == 0  # resumed from its version: nothing listed again
    assert churn_seen(recorder, "cut")[("ADDED", "faults-cut-0")] == 1
    assert churn_seen(recorder, "cut")[("MODIFIED", "faults-cut-1")] == 1
    assert recorder.problems == []


def test_410_gone_after_etcd_compaction_lists_again(plane, proxy, watched, caplog):
    caplog.set_level(logging.WARNING, logger="drawb.cluster.kube.informer")
    kube, recorder = watched
    plane.api().create(a_slice("faults-gone-kept"))
    wait_for(lambda: any(o["metadata"]["name"] == "faults-gone-kept" for o in kube.list("ResourceSlice")),
             what="the kept slice in the store")
    informer = kube.watch("ResourceSlice")
    lists = informer.stats["lists"]
    proxy.refuse(True)
    proxy.cut()
    churn(plane, "gone")
    change(plane, "faults-gone-kept", "C")
    revision = plane.cluster.compact_etcd()
    assert revision > int(informer.resource_version)
    proxy.refuse(False)
    assert_equal_to_fresh_list(plane, kube)
    assert informer.stats["expired"] >= 1 and informer.stats["lists"] > lists  # the server said 410 Gone
    assert not [line for line in informer_lines(caplog) if "410" in line or "expired" in line]  # expected: no line
    # the re-list tells the handler what changed since the last event, once each
    assert churn_seen(recorder, "gone") == Counter({
        ("ADDED", "faults-gone-0"): 1, ("ADDED", "faults-gone-1"): 1, ("ADDED", "faults-gone-kept"): 1,
        ("MODIFIED", "faults-gone-kept"): 1})
    assert recorder.problems == []


def test_api_server_restart_during_a_watch(plane, watched):
    kube, recorder = watched
    claim_informer = kube.watch("ResourceClaim")
    api = plane.api()
    namespace = plane.create_namespace("faults-restart")
    try:
        api.create(a_slice("faults-restart-before"))
        away = plane.cluster.restart_component("kube-apiserver")
        assert away < 60
        churn(plane, "restart")
        api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "faults-claim", "namespace": namespace},
                    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}})
        assert_equal_to_fresh_list(plane, kube)
        assert claim_informer.stats["failures"] + claim_informer.stats["expired"] >= 1  # it did lose the server
        seen = churn_seen(recorder, "restart")
        assert seen[("ADDED", "faults-restart-before")] == 1
        assert seen[("ADDED", "faults-restart-0")] == 1 and seen[("ADDED", "faults-restart-1")] == 1
        assert recorder.problems == []
    finally:
        api.delete(path_for("Namespace", namespace))


def informer_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "drawb.cluster.kube.informer"
            and r.levelno >= logging.WARNING]


def test_each_change_shows_within_2_s_of_the_api_server_answering_again(plane, caplog, timings):
    """Two outages of the API server in a row (stopped 12 s, then started again), the informers with their own
    backoff (up to 30 s, which a 12 s outage would grow to 8-16 s): after each, a claim made as soon as the API
    server is ready again is in the store within 2 s; one complete line per lost watch."""
    caplog.set_level(logging.WARNING, logger="drawb.cluster.kube.informer")
    kube = KubeCluster(kubeconfig=str(plane.kubeconfig))
    namespace = plane.create_namespace("faults-back")
    try:
        claims = kube.watch("ResourceClaim")
        kube.watch("ResourceSlice")  # no watch cache: its resumed watches read etcd
        late = []
        for n in range(2):
            away = plane.cluster.restart_component("kube-apiserver", down_s=12)  # returns once /readyz answers ok
            answering = time.monotonic()
            plane.api().create(a_claim(f"back-{n}", namespace))
            wait_for(lambda: any(o["metadata"]["name"] == f"back-{n}" for o in claims.items()), timeout=60,
                     interval=0.02, what=f"claim back-{n} in the store")
            late.append(time.monotonic() - answering)
            assert away < 60
        timings.update({f"watch_back_after_restart_{n}_s": seconds for n, seconds in enumerate(late)})
        assert max(late) < 2.0, late
        assert claims.stats["failures"] >= 2  # it did lose the server, each time
        lines = informer_lines(caplog)
        for kind in ("resourceclaims", "resourceslices"):
            ours = [line for line in lines if line.startswith(f"watch of {kind} ")]
            assert 1 <= len(ours) <= 2, lines  # one line per restart at most, not one per retry
        for line in lines:
            assert re.fullmatch(r"watch of \w+ .+; retrying in \d+\.\d s", line), line
            assert line.count("'") % 2 == 0 and line.count('"') % 2 == 0, line  # nothing cut off
            assert "0x" not in line and "Caused by" not in line and "410" not in line, line
    finally:
        kube.close()
        plane.api().delete(path_for("Namespace", namespace))


def test_watch_timeouts_reconnect_and_backoff_is_capped(plane, proxy, tmp_path):
    kube = KubeCluster(kubeconfig=proxied_kubeconfig(plane, proxy, tmp_path), watch_timeout_s=2, max_backoff_s=1.0)
    try:
        informer = kube.watch("ResourceSlice")
        wait_for(lambda: informer.stats["watches"] >= 3, timeout=20, what="three watches ended by the server")
        assert informer.stats["failures"] == 0 and informer.stats["lists"] == 1  # resumed, never listed again
        plane.api().create(a_slice("faults-timeout-0"))
        wait_for(lambda: any(o["metadata"]["name"] == "faults-timeout-0" for o in kube.list("ResourceSlice")),
                 what="a slice added after several timeouts")

        proxy.refuse(True)
        attempts = len(proxy.accepted)
        proxy.cut()
        time.sleep(5)
        proxy.refuse(False)
        # urllib3 retries a refused request at once a few times: one attempt is a burst of connections
        starts = [t for i, t in enumerate(proxy.accepted[attempts:], attempts) if t - proxy.accepted[i - 1] > 0.3]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        assert len(gaps) >= 3, gaps  # it kept trying ...
        assert max(gaps) < 1.5, gaps  # ... never waiting longer than the cap (1 s) ...
        assert min(gaps[2:]) > 0.8, gaps  # ... and not hammering the server once backed off
        assert_equal_to_fresh_list(plane, kube)
    finally:
        kube.close()
        plane.api().delete(path_for("ResourceSlice", "faults-timeout-0"))


def test_close_leaves_no_thread(plane, proxy, tmp_path):
    before = {t.name for t in threading.enumerate()}
    for _ in range(3):  # closed right after the first list: the watch may be opening at that moment
        kube = KubeCluster(kubeconfig=proxied_kubeconfig(plane, proxy, tmp_path))
        for kind in WATCHED:
            kube.watch(kind)
        kube.close()
    left = {t.name for t in threading.enumerate()} - before
    assert not {n for n in left if n.startswith("drawb-informer")}, left


def a_claim(name: str, namespace: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}


def test_notebook_watch_updates_its_display_on_the_real_cluster(plane, shell):
    from tests.unit.frontends.test_watch import Recording, row_of

    namespace = plane.create_namespace("faults-nb-watch")
    original = shell.ipython.display_pub
    writer = threading.Timer(0.5, lambda: plane.api().create(a_claim("watched-claim", namespace)))

    class CreateOnceShown(Recording):
        def publish(self, *args, **kwargs):
            super().publish(*args, **kwargs)
            if not writer.is_alive() and len(self.published) == 1:
                writer.start()  # the claim is made once the first table is on screen

    shell.ipython.display_pub = recording = CreateOnceShown(shell=shell.ipython)
    try:
        shell.run(f"%config DRAMagics.kubeconfig = {str(plane.kubeconfig)!r}")
        assert shell.run(f"%dra claims -n {namespace} --watch --for 4") is None
        writer.join()
        ids = {display_id for display_id, _, _ in recording.published}
        assert len(ids) == 1 and None not in ids
        assert [update for _, update, _ in recording.published] == [False, True]
        assert "watched-claim" not in recording.published[0][2]
        assert ">pending<" in row_of(recording.published[1][2], "watched-claim")
    finally:
        shell.ipython.display_pub = original
        session = shell.ipython.magics_manager.registry["DRAMagics"].session
        session.close()
        shell.run("%config DRAMagics.kubeconfig = None")
        plane.api().delete(path_for("Namespace", namespace))


def test_cli_watch_prints_changes_from_the_real_cluster(plane):
    import queue
    import signal
    import subprocess
    import sys

    namespace = plane.create_namespace("faults-cli-watch")
    drawb = Path(sys.executable).with_name("drawb")
    proc = subprocess.Popen([str(drawb), "--kubeconfig", str(plane.kubeconfig), "claims", "-n", namespace, "--watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)
    reader.start()

    def next_line(timeout: float = 30) -> str:
        return lines.get(timeout=timeout).rstrip("\n")

    try:
        assert next_line(timeout=120) == "(no rows)"  # a process start: imports and connecting (slow on a loaded host)
        plane.api().create(a_claim("cli-claim", namespace))
        assert next_line().endswith(f" + {namespace}/cli-claim")
        plane.api().delete(path_for("ResourceClaim", "cli-claim", namespace))
        assert next_line().endswith(f" - {namespace}/cli-claim")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 130
        assert proc.stderr.read().splitlines() == ["Interrupted: drawb claims stopped before it finished"]
    finally:
        proc.kill()
        proc.wait()
        plane.api().delete(path_for("Namespace", namespace))
