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
import os
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


def slice_updates(kubeconfig: str, updates: int) -> tuple[list[float], list[float], list[float]]:
    """Per update (seconds): event arrival -> inventory spliced, event arrival -> frame showing it,
    and write -> frame showing it."""
    api = Api.from_kubeconfig(kubeconfig)
    cluster = KubeCluster(kubeconfig=kubeconfig)
    slices = cluster.watch("ResourceSlice")
    arrived: dict[str, float] = {}
    spliced: dict[str, float] = {}
    shown: dict[str, float] = {}
    done = threading.Event()

    def first(event_type: str, obj: dict) -> None:  # runs before LiveDevices' handler
        arrived[obj["metadata"]["resourceVersion"]] = time.perf_counter()

    slices.subscribe(first)
    live = LiveDevices(cluster)
    target = next(s for s in slices.items() if s["spec"]["driver"] == "gpu.nvidia.com")
    name, device = target["metadata"]["name"], target["spec"]["devices"][0]["name"]
    column = f"{target['spec']['driver']}/mark"  # an unqualified attribute is in the driver's domain

    def last(event_type: str, obj: dict) -> None:  # runs after LiveDevices' handler
        attributes = obj["spec"]["devices"][0].get("attributes") or {}
        if obj["metadata"]["name"] != name or "mark" not in attributes:
            return
        spliced[obj["metadata"]["resourceVersion"]] = time.perf_counter()
        frame = live.frame()
        row = frame[(frame["pool"] == obj["spec"]["pool"]["name"]) & (frame["device"] == device)]
        mark = attributes["mark"]["string"]
        assert row[column].iloc[0] == mark, (row[column].iloc[0], mark)
        shown[obj["metadata"]["resourceVersion"]] = time.perf_counter()
        done.set()

    slices.subscribe(last)
    to_inventory, to_frame, write_to_frame = [], [], []
    try:
        for i in range(updates):
            obj = api.get(path_for("ResourceSlice", name))
            obj["spec"]["devices"][0].setdefault("attributes", {})["mark"] = {"string": f"update-{i}"}
            done.clear()
            written = time.perf_counter()
            version = api.request("PUT", path_for("ResourceSlice", name), body=obj)["metadata"]["resourceVersion"]
            if not done.wait(30):
                raise RuntimeError(f"update {i} never reached the frame")
            while version not in shown:
                done.clear()
                done.wait(5)
            to_inventory.append(spliced[version] - arrived[version])
            to_frame.append(shown[version] - arrived[version])
            write_to_frame.append(shown[version] - written)
    finally:
        obj = api.get(path_for("ResourceSlice", name))
        obj["spec"]["devices"][0].get("attributes", {}).pop("mark", None)
        api.request("PUT", path_for("ResourceSlice", name), body=obj)
        cluster.close()
    return to_inventory, to_frame, write_to_frame


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
            self.server.stopping.wait(float(query.get("timeoutSeconds", 60)))
            self.wfile.write(b"0\r\n\r\n")
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


def replay(copies: int, runs: int, source: Path) -> None:
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
    to_inventory, to_frame, write_to_frame = slice_updates(kubeconfig, updates)
    for label, values in (("event arrival -> inventory spliced", to_inventory),
                          ("event arrival -> frame", to_frame), ("write -> frame", write_to_frame)):
        ordered = sorted(values)
        print(f"  one slice update, {label}: median {_ms(statistics.median(values))}, "
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
        replay(args.replay, args.runs, args.record)


if __name__ == "__main__":
    main()
