"""Where manifests come from: files, folders, standard input, a notebook cell, or the cluster's workloads."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from drawb.cluster.protocol import Cluster, kind_of
from drawb.migrate.errors import ManifestNotFound, ManifestNotYaml
from drawb.migrate.legacy import mentions_nvidia

CLUSTER_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod")
_SUFFIXES = (".yaml", ".yml")
_SERVER_FIELDS = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink")
_SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")


@dataclass(frozen=True)
class Source:
    """One manifest text and where it came from."""

    name: str  # shown in the report and errors: a path, ``<stdin>``, ``<cell>`` or ``cluster:ns/Kind/name``
    text: str
    path: Path | None = None  # the file, for files
    relative: str | None = None  # where it goes under --out


def _read(path: Path, shown: str, newline: str | None) -> str:
    try:
        with path.open(encoding="utf-8", newline=newline) as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise ManifestNotYaml(f"{shown}: not YAML: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ManifestNotFound(f"{shown}: cannot read it: {exc.strerror}") from None


def read_paths(paths: list[str], stdin_text: str | None = None, keep_line_breaks: bool = False) -> list[Source]:
    """The manifests at ``paths`` (files, folders searched for *.yaml and *.yml, ``-`` for standard input);
    with ``keep_line_breaks``, a file's ``\\r\\n`` stays as written (else every line break reads as ``\\n``)."""
    newline = "" if keep_line_breaks else None
    sources: list[Source] = []
    for raw in paths:
        if raw == "-":
            text = stdin_text if stdin_text is not None else sys.stdin.read()
            sources.append(Source("<stdin>", text, None, "stdin.yaml"))
            continue
        path = Path(raw).expanduser()
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file())
            if not files:
                raise ManifestNotFound(f"{raw}: no *.yaml or *.yml files in this folder")
            sources += [Source(str(p), _read(p, str(p), newline), p, str(p.relative_to(path))) for p in files]
        elif path.is_file():
            sources.append(Source(str(path), _read(path, str(path), newline), path, path.name))
        else:
            raise ManifestNotFound(f"{raw}: no such file or folder", hint="give manifest files, folders, or - for "
                                   "standard input")
    return sources


def _clean(obj: dict) -> dict:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_FIELDS}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _SERVER_ANNOTATIONS}
    meta.pop("annotations", None)
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": meta, "spec": obj.get("spec")}


def _owned(obj: dict) -> bool:
    return any(ref.get("controller") for ref in (obj.get("metadata") or {}).get("ownerReferences") or [])


def read_cluster(cluster: Cluster, namespace: str | None) -> list[Source]:
    """The cluster's workloads (in ``namespace``, or everywhere) that ask for legacy GPU resources, as YAML.

    Pods and Jobs a controller owns are left out: their owner is migrated instead.
    """
    from drawb.migrate.rewrite import dump, plain

    sources = []
    for kind in CLUSTER_KINDS:
        for obj in cluster.list(kind, namespace):
            obj = {**obj, "apiVersion": kind_of(kind).api_version, "kind": kind}
            if _owned(obj) or not mentions_nvidia(obj.get("spec")):
                continue
            meta = obj.get("metadata") or {}
            ns, name = meta.get("namespace", ""), meta.get("name", "")
            text = dump(plain(_clean(obj)))  # a cluster may hand out read-only dict subclasses
            sources.append(Source(f"cluster:{ns}/{kind}/{name}", text, None, f"{ns}/{kind.lower()}-{name}.yaml"))
    return sources
