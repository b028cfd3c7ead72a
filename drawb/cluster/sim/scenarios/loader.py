"""Load a bundled scenario, or generate a synthetic one, as Kubernetes objects."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from drawb import versions
from drawb.api.resourcefit import is_extended
from drawb.cluster.sim.catalog import MODELS
from drawb.cluster.sim.classes import nvidia_device_classes
from drawb.cluster.sim.kubelet import DEFAULT_PULL_SECONDS
from drawb.cluster.sim.nodes import node_object
from drawb.cluster.sim.publish import (
    Gpu,
    GpuNode,
    MigInstance,
    compute_domain_slice,
    gpu_slices,
)
from drawb.cluster.sim.scenarios.local import local_scenario
from drawb.cluster.sim.scenarios.scenario import Scenario, ScenarioError
from drawb.gpu.releases import DEFAULT_RELEASE, UnknownDriverRelease, release


def list_scenarios() -> dict[str, str]:
    """Bundled scenario names and their one-line descriptions."""
    found = {}
    for entry in resources.files(__package__).iterdir():
        if entry.name.endswith(".yaml"):
            found[entry.name[:-5]] = yaml.safe_load(entry.read_text()).get("description", "")
    found["synthetic"] = "generated cluster of any size: synthetic:<nodes>[x<devices per node>]"
    found["local"] = "this machine's GPUs read through NVML (local:FILE: readings saved with `local --save FILE`)"
    return dict(sorted(found.items()))


def build_scenario(name: str = "default") -> Scenario:
    """The bundled scenario ``name``, ``synthetic:<nodes>[x<devices per node>]``, ``local[:FILE]``, or
    a scenario file of the bundled ones' shape (a path ending in ``.yaml`` or ``.yml``)."""
    if name.startswith("synthetic"):
        return _synthetic_from_name(name)
    if name == "local" or name.startswith("local:"):
        return local_scenario(name.partition(":")[2] or None)
    if name.endswith((".yaml", ".yml")):
        path = Path(name)
        if not path.is_file():
            raise ScenarioError(f"scenario file {name!r} does not exist",
                                hint="give the path of a file shaped like the bundled default.yaml")
        return _from_file(path.stem, path.read_text(), where=f"scenario file {name!r}")
    bundled = resources.files(__package__) / f"{name}.yaml"
    if not bundled.is_file():
        known = ", ".join(list_scenarios())
        raise ScenarioError(f"unknown scenario {name!r}; known scenarios: {known}; or a scenario file (.yaml)")
    return _from_file(name, bundled.read_text(), where=f"scenario {name!r}")


def _from_file(name: str, text: str, *, where: str) -> Scenario:
    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ScenarioError(f"{where} is not valid YAML: {err}") from None
    if not isinstance(spec, dict):
        raise ScenarioError(f"{where}: expected a mapping with description, nodes and feature_gates")
    driver_release = _parse_driver_release(where, spec.get("driver_release", DEFAULT_RELEASE))
    gpu_nodes = [_parse_node(name, i, n, driver_release) for i, n in enumerate(spec.get("nodes", []))]
    scenario = _assemble(name, spec.get("description", ""), gpu_nodes)
    scenario.feature_gates = _parse_gates(name, spec.get("feature_gates") or {})
    scenario.server_version = _parse_version(where, spec.get("kubernetes_version"), scenario.feature_gates)
    scenario.image_pull_seconds = _parse_pull_seconds(where, spec.get("image_pull_seconds", DEFAULT_PULL_SECONDS))
    return scenario


MAX_PULL_SECONDS = 3600


def _parse_driver_release(where: str, raw: object) -> str:
    """A scenario's ``driver_release`` (``v25.12``, or a tag such as ``v0.4.1``) as drawb names the line."""
    try:
        return release(str(raw)).name
    except UnknownDriverRelease as exc:
        raise ScenarioError(f"{where}: driver_release: {exc}", hint=exc.hint) from None


def _parse_pull_seconds(where: str, raw: object) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= MAX_PULL_SECONDS:
        raise ScenarioError(f"{where}: image_pull_seconds must be a number of seconds from 0 to {MAX_PULL_SECONDS}, "
                            f"not {raw!r}", hint="e.g. image_pull_seconds: 10 for a pull as slow as a real one")
    return float(raw)


def _parse_gates(scenario: str, raw: dict) -> dict[str, bool]:
    if not isinstance(raw, dict) or not all(isinstance(v, bool) for v in raw.values()):
        raise ScenarioError(f"scenario {scenario!r}: feature_gates must map gate names to true or false")
    known = {gate for minor in versions.known() for gate in versions.rules(minor).gates}
    unknown = sorted(set(raw) - known)
    if unknown:  # whether the scenario's own version has each gate is checked where the cluster starts
        raise ScenarioError(f"scenario {scenario!r}: unknown feature gate(s) {', '.join(unknown)}; "
                            f"known in Kubernetes {versions.known()[0]}-{versions.newest()}: {', '.join(sorted(known))}")
    return dict(raw)


def _parse_version(where: str, raw: object, gates: dict[str, bool]) -> str | None:
    """A scenario's ``kubernetes_version`` ("1.36", "v1.36.1"), checked with its gates against that minor."""
    if raw is None:
        return None
    text = repr(raw) if isinstance(raw, float) else raw  # YAML reads an unquoted 1.36 as a number
    if isinstance(raw, bool) or not isinstance(text, str) or (isinstance(raw, float) and len(text.split(".")[1]) < 2):
        raise ScenarioError(f"{where}: kubernetes_version {raw!r} is not a Kubernetes version",
                            hint='write it quoted, e.g. kubernetes_version: "1.36" (or "v1.36.3")')
    try:
        parsed = versions.parse(text)
    except versions.NotAKubernetesVersion as exc:
        raise ScenarioError(f"{where}: kubernetes_version: {exc}", hint=exc.hint) from None
    rules, _ = versions.known_rules(parsed)  # a newer version warns where the cluster starts
    if rules is None:
        raise versions.UnsupportedKubernetesVersion(
            f"{where}: kubernetes_version {text}: Kubernetes {parsed.minor_text} is older than drawb models "
            f"({versions.known()[0]} to {versions.newest()})")
    try:
        rules.gate_values(gates)
    except (versions.UnknownFeatureGate, versions.LockedFeatureGate) as exc:
        raise type(exc)(f"{where}: {exc}", hint=exc.hint) from None
    return text


def _synthetic_from_name(name: str) -> Scenario:
    _, _, size = name.partition(":")
    try:
        nodes, _, per_node = (size or "100").partition("x")
        node_count, device_count = int(nodes), int(per_node or 10)
    except ValueError:
        raise ScenarioError(
            f"bad synthetic scenario {name!r}: write synthetic:<nodes>[x<devices per node>], e.g. synthetic:10000x10"
        ) from None
    return synthetic(node_count, device_count)


def _parse_node(scenario: str, index: int, raw: dict, driver_release: str = DEFAULT_RELEASE) -> GpuNode:
    where = f"scenario {scenario!r} node #{index}"
    try:
        if raw["model"] not in MODELS:
            raise ScenarioError(f"{where}: unknown model {raw['model']!r}; known: {', '.join(MODELS)}")
        gpus = tuple(
            Gpu(
                minor=g["minor"],
                pci_bus_id=g["pci"],
                pcie_root=g.get("root"),
                mig=tuple(_parse_mig(m) for m in g.get("mig", ())),
                numa_node=g.get("numa"),
            )
            for g in raw["gpus"]
        )
        return GpuNode(
            name=raw["name"],
            model=raw["model"],
            driver_version=str(raw["driver_version"]),
            cuda_driver_version=str(raw["cuda_driver_version"]),
            gpus=gpus,
            addressing_mode=raw.get("addressing_mode"),
            labels=dict(raw.get("labels", {})),
            pool_generation=int(raw.get("pool_generation", 1)),
            driver_release=driver_release,
            extended_resources=_parse_extended_resources(where, raw.get("extended_resources") or {}),
        )
    except KeyError as missing:
        raise ScenarioError(f"{where}: missing field {missing}") from None


def _parse_extended_resources(where: str, raw: object) -> dict[str, int]:
    """A node's ``extended_resources``: device-plugin resource name -> a count of at least 0."""
    if not isinstance(raw, dict):
        raise ScenarioError(f"{where}: extended_resources must be a mapping such as {{nvidia.com/gpu: 8}}, "
                            f"not {raw!r}")
    out = {}
    for name, count in raw.items():
        if not isinstance(name, str) or not is_extended(name):
            raise ScenarioError(f"{where}: extended_resources: {name!r} is not an extended resource name "
                                "(a domain outside kubernetes.io, then a name: nvidia.com/gpu)")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ScenarioError(f"{where}: extended_resources: {name}: {count!r} is not a whole number of at least 0")
        out[name] = count
    return out


def _parse_mig(text: str) -> MigInstance:
    profile, _, start = text.partition("@")
    return MigInstance(profile=profile, start=int(start or 0))


def _assemble(name: str, description: str, gpu_nodes: list[GpuNode]) -> Scenario:
    slices = [s for n in gpu_nodes for s in gpu_slices(name, n)] + [compute_domain_slice(name, n) for n in gpu_nodes]
    return Scenario(
        name=name,
        description=description,
        gpu_nodes=gpu_nodes,
        nodes=[node_object(name, n) for n in gpu_nodes],
        resource_slices=slices,
        device_classes=nvidia_device_classes(),
        slices_as_built=True,
    )


# Refused before anything is built: memory grows with the device count (about 1 GB per 100,000 devices).
MAX_SYNTHETIC_NODES = 20_000
MAX_SYNTHETIC_DEVICES_PER_NODE = 512  # above 128 a node's pool has several slices
MAX_SYNTHETIC_DEVICES = 200_000

_SYNTHETIC_MODELS = (
    ("A100-SXM4-40GB", "570.172.08", "12.8", None),
    ("H100-80GB-HBM3", "580.95.05", "13.0", "None"),
    ("H200", "580.159.03", "13.0", "None"),
    ("L4", "570.172.08", "12.8", None),
)


def synthetic(nodes: int, devices_per_node: int = 10) -> Scenario:
    """A deterministic cluster of ``nodes`` GPU nodes with ``devices_per_node`` devices each.

    Models rotate A100, H100, H200, L4. Every H100 node whose device count allows it has its
    last GPU split into seven ``1g.10gb`` MIG devices, so selectors on ``profile`` have work.
    """
    if nodes < 0 or devices_per_node < 1:
        raise ScenarioError("synthetic clusters need nodes >= 0 and devices_per_node >= 1")
    if nodes > MAX_SYNTHETIC_NODES or devices_per_node > MAX_SYNTHETIC_DEVICES_PER_NODE \
            or nodes * devices_per_node > MAX_SYNTHETIC_DEVICES:
        raise ScenarioError(
            f"synthetic:{nodes}x{devices_per_node} is too large: drawb builds at most {MAX_SYNTHETIC_NODES:,} nodes, "
            f"{MAX_SYNTHETIC_DEVICES_PER_NODE} devices per node and {MAX_SYNTHETIC_DEVICES:,} devices in all",
            hint="e.g. synthetic:10000x10 (100,000 devices), the largest size the benchmarks use",
        )
    gpu_nodes = []
    for i in range(nodes):
        key, driver, cuda, addressing = _SYNTHETIC_MODELS[i % len(_SYNTHETIC_MODELS)]
        split = key == "H100-80GB-HBM3" and devices_per_node >= 8
        full = devices_per_node - 7 if split else devices_per_node
        gpus = [_synthetic_gpu(minor) for minor in range(full)]
        if split:
            mig = tuple(MigInstance("1g.10gb", start) for start in range(7))
            gpus.append(Gpu(full, _pci(i, full), _root(i, full), mig))
        gpu_nodes.append(
            GpuNode(
                name=f"gpu-node-{i:05d}",
                model=key,
                driver_version=driver,
                cuda_driver_version=cuda,
                gpus=tuple(gpus),
                addressing_mode=addressing,
                labels={"drawb.dev/rack": f"rack-{i // 32:04d}"},
            )
        )
    return _assemble(f"synthetic:{nodes}x{devices_per_node}", "generated cluster", gpu_nodes)


def _pci(node: int, minor: int) -> str:
    return f"0000:{(0x18 + minor * 0x11) % 256:02x}:00.0"


def _root(node: int, minor: int) -> str:
    return f"pci0000:{(0x15 + (minor // 2) * 0x22) % 256:02x}"


@lru_cache(maxsize=1024)
def _synthetic_gpu(minor: int) -> Gpu:
    """GPU ``minor`` of every synthetic node (its bus IDs depend on the minor only; Gpu is immutable)."""
    return Gpu(minor, _pci(0, minor), _root(0, minor))
