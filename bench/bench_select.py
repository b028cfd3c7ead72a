"""Selector preview over a 100,000-device inventory frame: `drawb.cel.select` against per-device cel-python.

Run: .venv/bin/python bench/bench_select.py [--devices 100000] [--runs 15] [--sample 1000] [--cluster sim|fixtures]

The cluster: `drawb.cluster.sim.scenarios.synthetic(devices // 10, 8)` (the 100,000-device cluster of
the inventory benchmark), or with `--cluster fixtures` the fixture nodes
(shared/research/fixtures/resourceslices.yaml: A100, H100 with MIG, L4, H200, plus compute-domain
devices) replicated with fresh node names and UUIDs until there are enough devices.

Per shape it reports:
- cold: the first `select` on a frame object (columns factorized then; later previews reuse them),
- warm: the median of `--runs` further `select` calls on the same frame (the notebook loop: one
  inventory, many previews),
- cel-python: the same selector evaluated per device with cel-python (celpy), timed on a fixed
  sample of `--sample` devices and scaled to all devices (evaluating 100,000 devices per shape would
  take minutes); the speed-up is that scaled time over drawb's warm median,
- drawb per device: `Selector.matches` on the same sample, scaled, for reference.
`select` returns the per-row outcome; the `matches`/`errors` frames are cut from the inventory on
first access and are not part of the timing. Medians on a shared 2-core machine are noisy.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from pathlib import Path

import celpy
import numpy as np
import yaml
from celpy import celtypes

from drawb.api.quantity import Quantity
from drawb.cel import compile_selector, select
from drawb.api.semver import Semver
from drawb.inventory.schema import split_name
from drawb.inventory import device_frame

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "research" / "fixtures"
if not FIXTURES.exists():
    FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "data" / "fixtures"

GPU = 'device.attributes["gpu.nvidia.com"]'
GPU_CLASS = 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"'
SHAPES = {
    "driver/type equality": (GPU_CLASS, ()),
    "productName in a list": (f'{GPU}.productName in ["NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA L4"]', ()),
    "memory compareTo(quantity)": ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0', ()),
    "cudaComputeCapability semver": (f'{GPU}.cudaComputeCapability.isGreaterThan(semver("8.0.0"))', ()),
    "has()-guarded profile": (f'has({GPU}.profile) && {GPU}.profile == "1g.10gb"', ()),
    "startsWith / matches": (f'{GPU}.productName.startsWith("NVIDIA H") || {GPU}.productName.matches("L4$")', ()),
    "class + request selector": ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))', (GPU_CLASS,)),
    "exists macro": (f'["A100", "H200"].exists(p, {GPU}.productName.contains(p))', ()),
    "error-producing (no such key)": (f'{GPU}.profile == "1g.10gb"', ()),
    "optional chaining": (f'{GPU}.?profile.orValue("") == "1g.10gb"', ()),
    "exists over the domains of device.attributes": ('device.attributes.exists(d, d == "compute-domain.nvidia.com")', ()),
    "exists over a domain's values": (
        f'{GPU}.exists(k, {GPU}[k] == "Hopper")',
        (),
    ),
}
# cel-python has no optional syntax: the anchor runs the equivalent conditional instead.
CELPY_EQUIVALENT = {
    "optional chaining": f'(has({GPU}.profile) ? {GPU}.profile : "") == "1g.10gb"',
}


def synthetic_slices(devices: int) -> list[dict]:
    """Replicate the fixture nodes (new node names and UUIDs) until there are `devices` devices."""
    base = yaml.safe_load((FIXTURES / "resourceslices.yaml").read_text())["items"]
    slices, count, copy_no = [], 0, 0
    while count < devices:
        for obj in base:
            s = copy.deepcopy(obj)
            node = f"{s['spec']['pool']['name']}-r{copy_no}"
            s["metadata"]["name"] += f"-r{copy_no}"
            s["spec"]["pool"]["name"] = node
            if "nodeName" in s["spec"]:
                s["spec"]["nodeName"] = node
            for d in s["spec"].get("devices", []):
                uuid = d.get("attributes", {}).get("uuid")
                if uuid and "string" in uuid:
                    uuid["string"] = uuid["string"][:-6] + f"{copy_no:06d}"
            count += len(s["spec"].get("devices", []))
            slices.append(s)
        copy_no += 1
    return slices


def cluster_slices(devices: int, source: str) -> tuple[list[dict], str]:
    """`synthetic(devices // 10, 8)` (8 GPU + 2 compute-domain devices per node), or the fixtures replicated."""
    if source == "sim":
        from drawb.cluster.sim.scenarios import synthetic

        nodes = devices // 10
        return list(synthetic(nodes, 8).resource_slices), f"drawb.cluster.sim.scenarios.synthetic({nodes}, 8)"
    return synthetic_slices(devices), "fixture nodes replicated"


# --- the cel-python anchor ------------------------------------------------------------------


def _celpy_value(attr: dict):
    if "int" in attr:
        return celtypes.IntType(attr["int"])
    if "bool" in attr:
        return celtypes.BoolType(attr["bool"])
    if "version" in attr:
        return Semver.parse(attr["version"])
    return celtypes.StringType(attr.get("string", ""))


def celpy_activation(device: dict, driver: str) -> dict:
    """The `device` variable as cel-python values, built per device like the scheduler does."""
    attributes: dict = {}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = split_name(name, driver)
        attributes.setdefault(celtypes.StringType(domain), celtypes.MapType({}))[celtypes.StringType(ident)] = (
            _celpy_value(attr)
        )
    capacity: dict = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = split_name(name, driver)
        capacity.setdefault(celtypes.StringType(domain), celtypes.MapType({}))[celtypes.StringType(ident)] = (
            Quantity.parse(cap["value"])
        )
    return {
        "device": celtypes.MapType(
            {
                celtypes.StringType("driver"): celtypes.StringType(driver),
                celtypes.StringType("attributes"): celtypes.MapType(attributes),
                celtypes.StringType("capacity"): celtypes.MapType(capacity),
            }
        )
    }


CELPY_FUNCTIONS = {
    "quantity": lambda s: Quantity.parse(str(s)),
    "semver": lambda s: Semver.parse(str(s)),
    "compareTo": lambda a, b: celtypes.IntType(a.compare_to(b)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(
        a.compare_to(b) == 1
    ),
}


def celpy_seconds_per_device(expressions: list[str], sample: list[tuple[dict, str]]) -> float:
    env = celpy.Environment()
    programs = [env.program(env.compile(e), functions=CELPY_FUNCTIONS) for e in expressions]
    start = time.perf_counter()
    for device, driver in sample:
        activation = celpy_activation(device, driver)
        for program in programs:
            try:
                if program.evaluate(activation) is not True:
                    break
            except Exception:  # noqa: BLE001 - an error ends this device, as in the scheduler
                break
    return (time.perf_counter() - start) / len(sample)


# --- drawb ----------------------------------------------------------------------------------


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sample", type=int, default=1000)
    parser.add_argument("--cluster", choices=("sim", "fixtures"), default="sim")
    args = parser.parse_args()

    slices, source = cluster_slices(args.devices, args.cluster)
    t = time.perf_counter()
    frame = device_frame(slices)
    build_s = time.perf_counter() - t
    pairs = [(d, s["spec"]["driver"]) for s in slices for d in s["spec"].get("devices", [])]
    rng = np.random.default_rng(0)
    sample = [pairs[i] for i in rng.choice(len(pairs), size=min(args.sample, len(pairs)), replace=False)]
    n = len(frame)
    print(f"cluster: {n} devices ({source}); device frame built in {build_s:.2f} s")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"cel-python timed on {len(sample)} sampled devices, scaled to {n}\n")
    print("| shape | matches | errors | cold ms | warm median ms | drawb per-device s | cel-python s | speed-up |")
    print("|---|---|---|---|---|---|---|---|")
    for label, (expression, classes) in SHAPES.items():
        selector = compile_selector(expression, kubernetes_version="1.34")
        fresh = frame.copy(deep=False)
        t = time.perf_counter()
        result = select(fresh, selector, class_selectors=classes)
        cold = (time.perf_counter() - t) * 1000
        warm = median_ms(lambda: select(fresh, selector, class_selectors=classes), args.runs)
        class_compiled = [compile_selector(c, kubernetes_version="1.34", stored=True) for c in classes]
        t = time.perf_counter()
        for device, driver in sample:
            try:
                all(s.matches(device, driver) for s in [*class_compiled, selector])
            except Exception:  # noqa: BLE001
                pass
        drawb_per_device = (time.perf_counter() - t) / len(sample) * n
        anchor = CELPY_EQUIVALENT.get(label, expression)
        celpy_total = celpy_seconds_per_device([*classes, anchor], sample) * n
        speedup = celpy_total * 1000 / warm
        print(
            f"| {label} | {result.match_count} | {result.error_count} | {cold:.1f} | {warm:.1f} | "
            f"{drawb_per_device:.1f} | {celpy_total:.1f} | {speedup:,.0f}x |"
        )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
