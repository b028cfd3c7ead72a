"""A snapshot built from ``kubectl get resourceslices,deviceclasses,resourceclaims,pods,nodes -o yaml``
output, for a user who can run kubectl against the cluster but not drawb.

kubectl's output carries neither the server version nor feature gates: the snapshot says so and takes
the defaults of the Kubernetes version given (drawb's default when none is).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import yaml

from drawb import versions
from drawb.cluster.snapshot.document import KIND, OBJECT_KINDS, Snapshot, minor_version, nearest_rules, parse
from drawb.cluster.snapshot.errors import NotASnapshot, SnapshotNotYamlOrJson, SnapshotUnreadable
from drawb.snapshot.scrub import select_objects

KUBECTL_COMMAND = "kubectl get resourceslices,deviceclasses,resourceclaims,pods,nodes -A -o yaml"


def _documents(path: str) -> list[object]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SnapshotNotYamlOrJson(f"{path} is a binary file, not kubectl's YAML or JSON output") from None
    except OSError as exc:
        raise SnapshotUnreadable(f"cannot read {path}: {exc.strerror}") from None
    if text.lstrip().startswith("{"):
        return [parse(text, path)]
    try:
        return list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return [parse(text, path)]  # names the problem (or the truncation) as snapshot files do


def _objects(document: object, path: str):
    if not isinstance(document, dict):
        if document is None:
            return
        raise NotASnapshot(f"{path} holds a {type(document).__name__}, not Kubernetes objects",
                           hint=f"save the output of `{KUBECTL_COMMAND}`")
    if document.get("kind") == KIND:
        raise NotASnapshot(f"{path} is already a drawb snapshot", hint="open it with `connect --snapshot FILE`")
    if isinstance(document.get("items"), list) and str(document.get("kind", "")).endswith("List"):
        for item in document["items"]:
            yield from _objects(item, path)
    else:
        yield document


def from_files(paths: list[str | os.PathLike], *, kubernetes_version: str | None = None) -> Snapshot:
    """The snapshot of the objects in kubectl output files (v1 Lists or single objects, YAML or JSON)."""
    listed: dict[str, list[dict]] = {kind: [] for kind in OBJECT_KINDS}
    skipped: Counter[str] = Counter()
    for path in map(str, paths):
        for document in _documents(path):
            for obj in _objects(document, path):
                kind = obj.get("kind")
                if kind in listed:
                    listed[kind].append(obj)
                else:
                    skipped[str(kind)] += 1
    if not any(listed[k] for k in ("ResourceSlice", "DeviceClass", "ResourceClaim", "Node")):
        found = ", ".join(f"{n} {k}" for k, n in sorted(skipped.items())) or "nothing"
        raise NotASnapshot(f"no ResourceSlice, DeviceClass, ResourceClaim or Node in {', '.join(map(str, paths))} "
                           f"(found {found})", hint=f"save the output of `{KUBECTL_COMMAND} > cluster.yaml`")
    version = minor_version(kubernetes_version or versions.DEFAULT)
    rules = nearest_rules(version)
    notes = [f"built from kubectl output: the server version and feature gates are unknown; "
             f"Kubernetes {version} and its default gates are taken"]
    if not listed["Namespace"]:
        notes.append("no Namespaces in the files: namespace labels (admin access) are unknown")
    if skipped:
        notes.append("left out: " + ", ".join(f"{n} {k}" for k, n in sorted(skipped.items())))
    return Snapshot(
        objects=select_objects(listed),
        kubernetes_version=version,
        server_version=None,
        feature_gates={gate: rules.gates[gate].default for gate in rules.field_gates},
        gate_sources=dict.fromkeys(rules.field_gates, "default"),
        source=f"kubectl output in {', '.join(Path(p).name for p in map(str, paths))}",
        notes=notes,
    )
