"""List/watch benchmark: a real API server's ResourceSlices to drawb's live device frame.

Run (the repository root), against a running local control plane::

    scripts/cluster --name big up --scenario synthetic:1000x8
    nice -n 5 .venv/bin/python bench/bench_watch.py --kubeconfig ~/.cache/drawb/kwok/clusters/big/kubeconfig.yaml
    nice -n 5 .venv/bin/python bench/bench_watch.py --replay 10   # 10x the recorded list, replayed (below)

Live (``--kubeconfig``), alternately in one run:

- anchor: ``kubectl get resourceslices -o json`` (its own process, output to a pipe read whole);
- ``drawb --kubeconfig ... devices --wide`` (its own process, the same way): list, frame, print;
- in this process, list to frame: a new ``KubeCluster``, ``LiveDevices`` (lists slices and claims,
  starts both watches, builds the inventory) and its first ``frame()``;
- one slice update: ``--updates`` PUTs of one slice (one attribute changed); per update, the time
  from the watch event's arrival (the informer's first handler: the event is read and decoded) to
  the frame that shows it (a handler after LiveDevices' own builds ``frame()``), and from before
  the PUT to that frame.

Replay (``--replay N``): the ResourceSlice list recorded from that cluster (``--record FILE``, made by
a live run) with every slice copied N times under new node, pool and slice names, served page by
page (500 a page, as the API server pages) by a loopback HTTP server that speaks the list and watch
protocol, so drawb's whole REST path (paging, decoding, informer, inventory, join) runs as against
the API server; the server's own cost is a write of pre-encoded pages.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import orjson
import yaml

from drawb.cluster.kube import KubeCluster
from drawb.cluster.kube.rest import PAGE_SIZE
from drawb.cluster.live import LiveDevices
from drawb.testing.api import Api, path_for

DRAWB = Path(sys.executable).with_name("drawb")
RECORD = Path(tempfile.gettempdir()) / "drawb-bench-watch-slices.json"
BENCH_CLAIM = "drawb-bench-watch"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.2f} ms"


def _kubectl(kubeconfig: str) -> str:
    link = Path(kubeconfig).parent / "bin" / "kubectl"
    return str(link) if link.exists() else "kubectl"


def timed_process(argv: list[str], env: dict | None = None) -> tuple[float, int]:
    """Seconds a process takes with its output read whole from a pipe; and the bytes it printed."""
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=env, check=True)
    return time.perf_counter() - started, len(proc.stdout)


def list_to_frame(kubeconfig: str) -> tuple[float, int]:
    """Seconds from a new KubeCluster to LiveDevices' first frame; the frame's rows."""
    started = time.perf_counter()
    cluster = KubeCluster(kubeconfig=kubeconfig)
    try:
        frame = LiveDevices(cluster).frame()
        return time.perf_counter() - started, len(frame)
    finally:
        cluster.close()


def slice_updates(kubeconfig: str, updates: int) -> dict[str, list[float]]:
    """One slice update per round, PUT to the API server (one attribute changed), and one claim
    allocated per round (a new claim, its status written: an allocation cannot change): per round,
    the seconds from event arrival to the handlers done and to the frame showing it, and from the
    write to that frame."""
    api = Api.from_kubeconfig(kubeconfig)
    cluster = KubeCluster(kubeconfig=kubeconfig)
    made: list[str] = []

    def write_slice(obj: dict) -> float:
        written = time.perf_counter()
        api.request("PUT", path_for("ResourceSlice", obj["metadata"]["name"]), body=obj)
        return written

    def write_claim(obj: dict) -> float:
        meta = obj["metadata"]
        for name in made:  # the previous round's claim goes first (its device is allocated once at a time)
            api.delete(path_for("ResourceClaim", name, "default"))
        made.clear()
        created = api.create({**obj, "metadata": {**meta, "labels": {"app.kubernetes.io/managed-by": "drawb"}},
                              "status": {}})
        made.append(meta["name"])
        created["status"] = obj["status"]
        written = time.perf_counter()
        api.request("PUT", path_for("ResourceClaim", meta["name"], meta["namespace"]) + "/status", body=created)
        return written

    def restore(target: dict) -> None:
        obj = api.get(path_for("ResourceSlice", target["metadata"]["name"]))
        obj["spec"]["devices"][0].get("attributes", {}).pop("mark", None)
        api.request("PUT", path_for("ResourceSlice", target["metadata"]["name"]), body=obj)
        for name in made:
            api.delete(path_for("ResourceClaim", name, "default"))

    try:
        return measure_updates(cluster, updates, write_slice, write_claim, restore)
    finally:
        cluster.close()


def measure_updates(cluster, updates: int, write_slice, write_claim, restore) -> dict[str, list[float]]:
    """Time ``updates`` slice updates and as many claim allocations through ``LiveDevices`` of
    ``cluster``: the write functions send an object to the server and return when they started the
    write that makes the event."""
    slices, claims = cluster.watch("ResourceSlice"), cluster.watch("ResourceClaim")
    arrived: dict[tuple[str, str], float] = {}
    spliced: dict[tuple[str, str], float] = {}
    shown: dict[tuple[str, str], float] = {}
    done = threading.Event()

    cpu: dict[tuple[str, str], float] = {}  # the informer thread's CPU time at arrival, then its use

    def first(kind: str):
        def handler(event_type: str, obj: dict) -> None:  # runs before LiveDevices' handler
            arrived[(kind, obj["metadata"]["resourceVersion"])] = time.perf_counter()
            cpu[(kind, obj["metadata"]["resourceVersion"])] = time.thread_time()
        return handler

    slices.subscribe(first("slice"))
    claims.subscribe(first("claim"))
    live = LiveDevices(cluster)
    target = next(s for s in slices.items() if s["spec"]["driver"] == "gpu.nvidia.com")
    name, pool = target["metadata"]["name"], target["spec"]["pool"]["name"]
    devices = [d["name"] for d in target["spec"]["devices"][:2]]
    column = f"{target['spec']['driver']}/mark"  # an unqualified attribute is in the driver's domain

    def row(frame, device: str):
        return frame[(frame["pool"] == pool) & (frame["device"] == device)]

    def last_slice(event_type: str, obj: dict) -> None:  # runs after LiveDevices' handler
        attributes = obj["spec"]["devices"][0].get("attributes") or {}
        if event_type == "DELETED" or obj["metadata"]["name"] != name or "mark" not in attributes:
            return
        version = ("slice", obj["metadata"]["resourceVersion"])
        spliced[version] = time.perf_counter()
        frame = live.frame()
        now = time.perf_counter()  # the frame is there; checking it is not part of the figure
        cpu[version] = time.thread_time() - cpu[version]
        assert row(frame, devices[0])[column].iloc[0] == attributes["mark"]["string"]
        shown[version] = now
        done.set()

    def last_claim(event_type: str, obj: dict) -> None:
        results = ((obj.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
        if event_type == "DELETED" or not obj["metadata"]["name"].startswith(BENCH_CLAIM) or not results:
            return
        version = ("claim", obj["metadata"]["resourceVersion"])
        spliced[version] = time.perf_counter()
        frame = live.frame()
        now = time.perf_counter()
        cpu[version] = time.thread_time() - cpu[version]
        assert row(frame, results[0]["device"])["claim"].iloc[0] == f"default/{obj['metadata']['name']}"
        shown[version] = now
        done.set()

    slices.subscribe(last_slice)
    claims.subscribe(last_claim)
    out: dict[str, list[float]] = {f"{k} {m}": [] for k in ("slice", "claim")
                                   for m in ("to inventory", "to frame", "cpu to frame", "write to frame")}

    def one(kind: str, write, obj: dict) -> None:
        done.clear()
        before = set(shown)
        written = write(obj)
        deadline = time.monotonic() + 30
        while not [v for v in shown.keys() - before if v[0] == kind]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"a {kind} update never reached the frame")
            done.wait(1)
            done.clear()
        version = next(v for v in shown.keys() - before if v[0] == kind)
        out[f"{kind} to inventory"].append(spliced[version] - arrived[version])
        out[f"{kind} to frame"].append(shown[version] - arrived[version])
        out[f"{kind} cpu to frame"].append(cpu[version])
        out[f"{kind} write to frame"].append(shown[version] - written)

    try:
        for i in range(updates):
            obj = copy.deepcopy(slices_by_name(slices)[name])
            obj["spec"]["devices"][0].setdefault("attributes", {})["mark"] = {"string": f"update-{i}"}
            one("slice", write_slice, obj)
            allocated = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": f"{BENCH_CLAIM}-{i}", "namespace": "default"},
                         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                             "deviceClassName": "gpu.nvidia.com"}}]}},
                         "status": {"allocation": {"devices": {"results": [{
                             "driver": target["spec"]["driver"], "pool": pool, "device": devices[i % 2],
                             "request": "gpu"}]}}}}
            one("claim", write_claim, allocated)
    finally:
        restore(target)
    return out


def slices_by_name(watch) -> dict[str, dict]:
    return {s["metadata"]["name"]: s for s in watch.items()}


def record(kubeconfig: str, path: Path) -> int:
    """Save the cluster's ResourceSlice list items (as the API server sent them); how many."""
    cluster = KubeCluster(kubeconfig=kubeconfig)
    items = cluster.list("ResourceSlice")
    path.write_bytes(orjson.dumps(items))
    return len(items)


def replicated(items: list[dict], copies: int) -> list[dict]:
    """``copies`` renamed copies of every slice: new slice, node and pool names and uids."""
    out = []
    for k in range(copies):
        for item in items:
            obj = copy.deepcopy(item)
            meta, spec = obj["metadata"], obj["spec"]
            meta["name"] = f"{meta['name']}-r{k}"
            meta["uid"] = str(uuid.uuid4())
            if spec.get("nodeName"):
                spec["nodeName"] = f"{spec['nodeName']}-r{k}"
            spec["pool"]["name"] = f"{spec['pool']['name']}-r{k}"
            out.append(obj)
    return out


class ReplayServer(ThreadingHTTPServer):
    """Serves pre-encoded list pages of ResourceSlices (and an empty claim list) and quiet watches."""

    daemon_threads = True

    def __init__(self, items: list[dict]):
        super().__init__(("127.0.0.1", 0), ReplayHandler)
        self.stopping = threading.Event()
        self.pages: list[bytes] = []
        for start in range(0, len(items), PAGE_SIZE):
            more = start + PAGE_SIZE < len(items)
            meta = {"resourceVersion": "1000", **({"continue": str(start + PAGE_SIZE)} if more else {})}
            self.pages.append(orjson.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
                                            "metadata": meta, "items": items[start:start + PAGE_SIZE]}))
        self.bytes = sum(len(p) for p in self.pages)
        self.version = itertools.count(1001)
        self.watchers: dict[str, list[queue.Queue]] = {"resourceslices": [], "resourceclaims": []}
        self.lock = threading.Lock()

    def push(self, plural: str, event_type: str, obj: dict) -> None:
        """Send one watch event to every open watch of ``plural`` (a new resourceVersion stamped)."""
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(next(self.version))
        line = orjson.dumps({"type": event_type, "object": obj}) + b"\n"
        with self.lock:
            for watcher in self.watchers[plural]:
                watcher.put(line)


class ReplayHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if query.get("watch") == "true":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            events: queue.Queue = queue.Queue()
            watchers = self.server.watchers.get(url.path.rsplit("/", 1)[-1], [])
            with self.server.lock:
                watchers.append(events)
            ends = time.monotonic() + float(query.get("timeoutSeconds", 60))
            try:
                while not self.server.stopping.is_set() and time.monotonic() < ends:
                    try:
                        line = events.get(timeout=0.2)
                    except queue.Empty:
                        continue
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # drawb closed the watch
            finally:
                with self.server.lock:
                    watchers.remove(events)
            return
        if url.path.endswith("/resourceslices"):
            body = self.server.pages[int(query.get("continue") or 0) // PAGE_SIZE]
        elif url.path == "/version":
            body = b'{"gitVersion": "v1.34.4-replay"}'
        else:
            body = orjson.dumps({"kind": "List", "metadata": {"resourceVersion": "1000"}, "items": []})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def replay(copies: int, runs: int, source: Path, updates: int) -> None:
    items = replicated(orjson.loads(source.read_bytes()), copies)
    server = ReplayServer(items)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = Path(tempfile.mkdtemp()) / "replay.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "replay",
        "clusters": [{"name": "replay", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
        "users": [{"name": "replay", "user": {}}],
        "contexts": [{"name": "replay", "context": {"cluster": "replay", "user": "replay"}}]}))
    nodes = len({i["spec"].get("nodeName") for i in items if i["spec"].get("nodeName")})
    print(f"replay: {len(items):,} slices of {nodes:,} nodes, {server.bytes / 2**20:.0f} MiB in "
          f"{len(server.pages)} pages (recorded from a live run, copied {copies}x)")
    times = []
    for _ in range(runs):
        seconds, rows = list_to_frame(str(kubeconfig))
        times.append(seconds)
    print(f"  drawb list -> frame ({rows:,} devices): median {_ms(statistics.median(times))}; "
          f"all {', '.join(_ms(t) for t in times)}")
    if updates:
        cluster = KubeCluster(kubeconfig=str(kubeconfig))

        def pushed(plural: str):
            previous: list[dict] = []

            def write(obj: dict) -> float:
                if plural == "resourceclaims":  # the previous round's claim goes first, as in the live run
                    for old in previous:
                        server.push(plural, "DELETED", old)
                    previous[:] = [obj]
                written = time.perf_counter()
                server.push(plural, "MODIFIED", obj)
                return written
            return write

        try:
            print_updates(measure_updates(cluster, updates, pushed("resourceslices"), pushed("resourceclaims"),
                                          lambda target: None))
        finally:
            cluster.close()
    server.stopping.set()
    server.shutdown()


def live(kubeconfig: str, runs: int, updates: int, record_to: Path, lists: bool = True) -> None:
    if lists:
        live_lists(kubeconfig, runs, record_to)
    live_updates(kubeconfig, updates)


def live_lists(kubeconfig: str, runs: int, record_to: Path) -> None:
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    kubectl = [_kubectl(kubeconfig), "get", "resourceslices", "-o", "json"]
    cli = [str(DRAWB), "--kubeconfig", kubeconfig, "devices", "--wide"]
    timed_process(kubectl, env)  # warm the page cache and the server's
    timed_process(cli, env)
    anchor, drawb_cli, in_process = [], [], []
    for _ in range(runs):
        seconds, size = timed_process(kubectl, env)
        anchor.append(seconds)
        drawb_cli.append(timed_process(cli, env)[0])
        seconds, rows = list_to_frame(kubeconfig)
        in_process.append(seconds)
    print(f"live: {record(kubeconfig, record_to):,} slices, {rows:,} devices; kubectl printed {size / 2**20:.1f} MiB")
    a = statistics.median(anchor)
    for label, values in (("kubectl get resourceslices -o json (anchor)", anchor),
                          ("drawb devices --wide (process)", drawb_cli),
                          ("drawb list -> frame (in process)", in_process)):
        m = statistics.median(values)
        print(f"  {label}: median {_ms(m)} ({m / a:.2f}x anchor); all {', '.join(_ms(t) for t in values)}")


def live_updates(kubeconfig: str, updates: int) -> None:
    print_updates(slice_updates(kubeconfig, updates))


def print_updates(figures: dict[str, list[float]]) -> None:
    labels = {"to inventory": "event arrival -> handler done", "to frame": "event arrival -> frame",
              "cpu to frame": "CPU time of that (the informer's thread)", "write to frame": "write -> frame"}
    for key, values in figures.items():
        kind, _, what = key.partition(" ")
        ordered = sorted(values)
        print(f"  one {kind} update, {labels[what]}: median {_ms(statistics.median(values))}, "
              f"p90 {_ms(ordered[int(len(ordered) * 0.9)])}, max {_ms(ordered[-1])} ({len(values)} updates)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kubeconfig", help="a running cluster (live figures; records its slices)")
    parser.add_argument("--replay", type=int, metavar="N", help="replay the recorded slices N times over")
    parser.add_argument("--record", type=Path, default=RECORD, help=f"the recorded list (default {RECORD})")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--updates-only", action="store_true", help="with --kubeconfig: only the slice updates")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cpus, python {sys.version.split()[0]}")
    if args.kubeconfig:
        live(args.kubeconfig, args.runs, args.updates, args.record, lists=not args.updates_only)
    if args.replay:
        replay(args.replay, args.runs, args.record, args.updates)


if __name__ == "__main__":
    main()
