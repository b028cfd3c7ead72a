"""Inventory benchmark: list response -> device frame at 100,000 devices, against orjson.loads.

Run: .venv/bin/python bench/bench_inventory.py [--nodes 10000] [--gpus-per-node 8] [--runs 7]

The cluster is `drawb.cluster.sim`'s synthetic one: per node a gpu.nvidia.com slice with
`--gpus-per-node` devices (A100, H100 with MIG, H200, L4 in turn) and a compute-domain.nvidia.com
slice with 2 devices, so 10,000 nodes x (8 + 2) = 100,000 devices in 20,000 slices. The list
response is serialized once; then, in the same run and interleaved:

- decode: median of `orjson.loads(body)`,
- decode + frame: median of `orjson.loads(body)` followed by `device_frame(items)` (the budget:
  at most 2x the decode), with the frame part reported on its own too,
- both with Python's garbage collector on (the default a notebook has) and off (the pure work),
- one-slice update: `DeviceInventory.upsert` of a modified slice plus reading `.frame`, median of
  `--updates` events (same devices, changed value; and one device fewer), against the full rebuild,
- memory: in a fresh child process, RSS after decoding (the anchor), after building the frame,
  and after dropping the decoded JSON; the frame's own `memory_usage(deep=True)`.
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import orjson

from drawb.cluster.sim.scenarios import synthetic
from drawb.inventory import DeviceInventory, device_frame


def list_response(nodes: int, gpus_per_node: int) -> bytes:
    """The ResourceSliceList of a synthetic cluster, as the API server would send it."""
    slices = synthetic(nodes, gpus_per_node).resource_slices
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSliceList",
            "metadata": {"resourceVersion": "1"}, "items": slices}
    return orjson.dumps(body)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms"


def bench_build(body: bytes, runs: int) -> dict[str, dict[str, float]]:
    """Medians of decode and decode + frame, with the collector on and off."""
    results = {}
    for mode in ("gc on", "gc off"):
        decode, total, frame_only = [], [], []
        for _ in range(runs):
            if mode == "gc off":
                gc.disable()
            t0 = time.perf_counter()
            doc = orjson.loads(body)
            decode.append(time.perf_counter() - t0)
            del doc
            gc.enable()
            gc.collect()
            if mode == "gc off":
                gc.disable()
            t0 = time.perf_counter()
            doc = orjson.loads(body)
            t1 = time.perf_counter()
            frame = device_frame(doc["items"])
            t2 = time.perf_counter()
            total.append(t2 - t0)
            frame_only.append(t2 - t1)
            del doc, frame
            gc.enable()
            gc.collect()
        results[mode] = {
            "decode": statistics.median(decode),
            "total": statistics.median(total),
            "frame": statistics.median(frame_only),
        }
    return results


def bench_breakdown(body: bytes, runs: int) -> dict[str, float]:
    """Where device_frame's time goes (collector off): slice headers and pool rules, the per-device
    pass over attributes and capacities, and building the typed pandas/Arrow columns."""
    from drawb.inventory._frame import build_frame
    from drawb.inventory._read import device_list, read_columns, read_header
    from drawb.inventory.pools import pool_states

    items = orjson.loads(body)["items"]
    parts: dict[str, list[float]] = {"headers and pools": [], "device pass": [], "columns": []}
    gc.collect()
    gc.disable()
    for _ in range(runs):
        problems: list[str] = []
        t0 = time.perf_counter()
        headers = [(read_header(obj, i, problems), obj) for i, obj in enumerate(items)]
        states = pool_states(h for h, _ in headers)
        current = [(h, device_list(obj, h, problems)) for h, obj in headers]
        complete = [states[(h.driver, h.pool)].complete for h, _ in headers]
        t1 = time.perf_counter()
        columns = read_columns(current, problems)
        t2 = time.perf_counter()
        build_frame(columns, complete, problems)
        t3 = time.perf_counter()
        for key, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2)):
            parts[key].append(dt)
    gc.enable()
    return {key: statistics.median(v) for key, v in parts.items()}


def bench_update(body: bytes, updates: int) -> dict[str, float]:
    """Median time of one-slice events on a DeviceInventory of the whole list, and a full rebuild."""
    items = orjson.loads(body)["items"]
    inventory = DeviceInventory(items)
    gpu_slices = [i for i, s in enumerate(items) if s["spec"]["driver"] == "gpu.nvidia.com"]
    step = max(1, len(gpu_slices) // updates)
    same, fewer = [], []
    for k in range(updates):
        obj = copy.deepcopy(items[gpu_slices[(k * step) % len(gpu_slices)]])
        obj["metadata"]["resourceVersion"] = str(10_000_000 + k)
        obj["spec"]["devices"][0]["attributes"]["productName"] = {"string": f"changed-{k}"}
        t0 = time.perf_counter()
        inventory.upsert(obj)
        _ = inventory.frame
        same.append(time.perf_counter() - t0)
        obj = copy.deepcopy(obj)
        del obj["spec"]["devices"][-1]
        t0 = time.perf_counter()
        inventory.upsert(obj)
        _ = inventory.frame
        fewer.append(time.perf_counter() - t0)
    rebuild = []
    for _ in range(3):
        t0 = time.perf_counter()
        device_frame(inventory.slices())
        rebuild.append(time.perf_counter() - t0)
    return {"same": statistics.median(same), "fewer": statistics.median(fewer),
            "rebuild": statistics.median(rebuild), "rows": len(inventory.frame)}


def memory_child(path: str) -> None:
    """Run in a fresh process: print RSS figures (MB) for decode, frame, and frame alone."""
    base = _rss_mb()
    with open(path, "rb") as f:
        body = f.read()
    doc = orjson.loads(body)
    del body
    decoded = _rss_mb()
    frame = device_frame(doc["items"])
    with_frame = _rss_mb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del doc
    gc.collect()
    alone = _rss_mb()
    own = float(frame.memory_usage(deep=True).sum()) / 2**20
    print(orjson.dumps({"base": base, "decoded": decoded, "with_frame": with_frame, "peak": peak,
                        "alone": alone, "own": own, "rows": len(frame), "columns": frame.shape[1]}).decode())


def bench_memory(body: bytes) -> dict[str, float]:
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(body)
        f.flush()
        out = subprocess.run([sys.executable, __file__, "--memory-child", f.name],
                             check=True, capture_output=True, text=True)
    return orjson.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return

    body = list_response(args.nodes, args.gpus_per_node)
    gc.collect()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
    print(f"list response: {len(body) / 2**20:.1f} MiB, {args.nodes:,} nodes")

    memory = bench_memory(body)
    print(f"\nmemory (fresh process, {memory['rows']:,} rows x {memory['columns']} columns):")
    print(f"  RSS with pandas and pyarrow imported: {memory['base']:.0f} MB")
    print(f"  RSS after decoding the JSON (anchor): {memory['decoded']:.0f} MB "
          f"({memory['decoded'] - memory['base']:.0f} MB for the decoded objects)")
    print(f"  RSS with the frame built:             {memory['with_frame']:.0f} MB (peak {memory['peak']:.0f} MB)")
    print(f"  RSS after dropping the decoded JSON:  {memory['alone']:.0f} MB")
    print(f"  the frame's own memory_usage(deep):   {memory['own']:.0f} MB")

    build = bench_build(body, args.runs)
    print(f"\nlist response -> device frame, median of {args.runs}:")
    for mode, r in build.items():
        print(f"  {mode:6s}: decode {_ms(r['decode'])}, decode + frame {_ms(r['total'])} "
              f"-> ratio {r['total'] / r['decode']:.2f}x (frame alone {_ms(r['frame'])}, "
              f"{r['frame'] / r['decode']:.2f}x the decode)")

    parts = bench_breakdown(body, args.runs)
    print("  where the frame time goes (gc off): " + ", ".join(f"{k} {_ms(v)}" for k, v in parts.items()))

    update = bench_update(body, args.updates)
    print(f"\none-slice update on {update['rows']:,} rows, median of {args.updates}:")
    print(f"  same devices, one value changed: {_ms(update['same'])}")
    print(f"  one device fewer:                {_ms(update['fewer'])}")
    print(f"  full rebuild (device_frame):     {_ms(update['rebuild'])} "
          f"({update['rebuild'] / update['same']:.0f}x the update)")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
