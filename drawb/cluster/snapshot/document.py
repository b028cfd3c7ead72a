"""The snapshot file: one versioned YAML or JSON document holding a cluster's DRA state.

Layout (``formatVersion`` 1)::

    kind: DrawbSnapshot
    formatVersion: 1
    drawbVersion: 0.1.0
    created: 2026-12-01T21:50:00Z
    source: the cluster it was read from, in words
    redacted: false
    cluster: {serverVersion, kubernetesVersion, featureGates: {gate: bool}, gateSources: {gate: how known}}
    notes: [what the snapshot could not know]
    objects: {Namespace: [...], Node: [...], DeviceClass: [...], ResourceSlice: [...],
              ResourceClaimTemplate: [...], ResourceClaim: [...], Pod: [...]}
    counts: {kind: number of objects}

``counts`` comes last, so a file cut short is recognised. Files are written to a temporary file
in the same folder and renamed, so a snapshot on disk is always whole.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import yaml

from drawb import release, versions
from drawb.atomicfile import write_atomic
from drawb.cluster.snapshot.errors import (
    NotASnapshot,
    SnapshotFormatVersion,
    SnapshotNotYamlOrJson,
    SnapshotTruncated,
    SnapshotUnreadable,
)

KIND = "DrawbSnapshot"
FORMAT_VERSION = 1
OBJECT_KINDS = ("Namespace", "Node", "DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim", "Pod")
_YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class Snapshot:
    """A cluster's DRA state as a snapshot file holds it."""

    objects: dict[str, list[dict]]  # by kind, every kind of OBJECT_KINDS present
    kubernetes_version: str  # "1.34": the rules the replay follows
    server_version: str | None  # "v1.34.4"; None when unknown (built from kubectl output)
    feature_gates: dict[str, bool]
    gate_sources: dict[str, str]  # gate -> how it is known: probed, metric, default
    source: str
    redacted: bool = False
    notes: list[str] = field(default_factory=list)
    drawb_version: str = release.VERSION
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))

    def counts(self) -> dict[str, int]:
        """How many objects of each kind."""
        return {kind: len(self.objects.get(kind, [])) for kind in OBJECT_KINDS}

    def to_document(self) -> dict:
        """The file's content as a plain dict, keys in file order (``counts`` last)."""
        return {
            "kind": KIND,
            "formatVersion": FORMAT_VERSION,
            "drawbVersion": self.drawb_version,
            "created": self.created,
            "source": self.source,
            "redacted": self.redacted,
            "cluster": {
                "serverVersion": self.server_version,
                "kubernetesVersion": self.kubernetes_version,
                "featureGates": dict(self.feature_gates),
                "gateSources": dict(self.gate_sources),
            },
            "notes": list(self.notes),
            "objects": {kind: self.objects.get(kind, []) for kind in OBJECT_KINDS},
            "counts": self.counts(),
        }


def minor_version(version: str) -> str:
    """``v1.34.4`` -> ``1.34`` (also ``1.34``, ``v1.34.4-gke.100`` and the like)."""
    return versions.parse(version).minor_text


def nearest_rules(version: str) -> versions.Rules:
    """The rules of the known minor nearest to ``version`` (no warning: a snapshot records the real one)."""
    found, _ = versions.known_rules(version)
    return found or versions.rules(versions.known()[0])


def write(snapshot: Snapshot, path: str | os.PathLike) -> Path:
    """Write ``snapshot`` to ``path`` (YAML for ``.yaml``/``.yml``, else JSON), whole or not at all."""
    target = Path(path)
    document = snapshot.to_document()
    if target.suffix.lower() in _YAML_SUFFIXES:
        text = yaml.dump(document, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False,
                         default_flow_style=False, allow_unicode=True)
    else:
        text = json.dumps(document, indent=1) + "\n"
    try:
        write_atomic(target, text, make_folders=False)
    except OSError as exc:
        raise SnapshotUnreadable(f"cannot write snapshot {path}: {exc.strerror}",
                                 hint="name a file in a folder that exists and that you can write to") from None
    return target


def read(path: str | os.PathLike) -> Snapshot:
    """The snapshot in file ``path``, or a named SnapshotError saying what is wrong with the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SnapshotNotYamlOrJson(f"{path} is not a snapshot: it is a binary file, not YAML or JSON") from None
    except OSError as exc:
        raise SnapshotUnreadable(f"cannot read snapshot {path}: {exc.strerror}",
                                 hint="check the path (`snapshot save FILE` writes one)") from None
    return from_document(parse(text, str(path)), str(path))


def parse(text: str, where: str) -> object:
    """A YAML or JSON text as data; a file that stops mid-document is SnapshotTruncated."""
    if not text.strip():
        raise SnapshotTruncated(f"{where} is empty")
    end = len(text.rstrip())
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.pos >= end or exc.msg.startswith("Unterminated string"):  # it runs to the end of the file
                raise SnapshotTruncated(f"{where} ends in the middle of its JSON (at line {exc.lineno})") from None
            raise SnapshotNotYamlOrJson(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno} "
                                        f"column {exc.colno}") from None
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None and mark.index >= end - 1:
            raise SnapshotTruncated(f"{where} ends in the middle of its YAML (at line {mark.line + 1})") from None
        at = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise SnapshotNotYamlOrJson(f"{where} is not valid YAML or JSON: {problem}{at}") from None


def from_document(document: object, where: str) -> Snapshot:
    """Check a parsed document is a whole snapshot of this format, and read it."""
    if isinstance(document, str | int | float) or document is None:
        raise SnapshotNotYamlOrJson(f"{where} is not a snapshot: it reads as plain text, not a YAML or JSON document")
    if not isinstance(document, dict) or document.get("kind") != KIND:
        what = document.get("kind") if isinstance(document, dict) else type(document).__name__
        raise NotASnapshot(f"{where} is not a drawb snapshot: it holds a {what or 'document without kind'}, "
                           f"not kind: {KIND}")
    version = document.get("formatVersion")
    if version != FORMAT_VERSION:
        by = document.get("drawbVersion", "an unknown version")
        newer = isinstance(version, int) and version > FORMAT_VERSION
        raise SnapshotFormatVersion(
            f"{where} is a snapshot of format version {version!r} (written by drawb {by}); "
            f"this drawb ({release.VERSION}) reads format version {FORMAT_VERSION}",
            hint="upgrade drawb to read it" if newer else "save the snapshot again with this drawb",
        )
    if not isinstance(document.get("counts"), dict):
        raise SnapshotTruncated(f"{where} ends before its last section (counts): the file was cut short")
    cluster, objects = document.get("cluster"), document.get("objects")
    if not isinstance(cluster, dict) or not isinstance(objects, dict):
        raise NotASnapshot(f"{where}: a {KIND} needs the sections cluster and objects")
    unknown = sorted(set(objects) - set(OBJECT_KINDS))
    if unknown:
        raise NotASnapshot(f"{where}: objects of kind {', '.join(unknown)} do not belong in a snapshot "
                           f"(known: {', '.join(OBJECT_KINDS)})")
    snapshot = Snapshot(
        objects={kind: list(objects.get(kind) or []) for kind in OBJECT_KINDS},
        kubernetes_version=str(cluster.get("kubernetesVersion") or ""),
        server_version=cluster.get("serverVersion"),
        feature_gates=dict(cluster.get("featureGates") or {}),
        gate_sources=dict(cluster.get("gateSources") or {}),
        source=str(document.get("source") or ""),
        redacted=bool(document.get("redacted")),
        notes=list(document.get("notes") or []),
        drawb_version=str(document.get("drawbVersion") or ""),
        created=str(document.get("created") or ""),
    )
    if snapshot.counts() != {kind: document["counts"].get(kind, 0) for kind in OBJECT_KINDS}:
        raise SnapshotTruncated(f"{where}: the objects do not add up to the counts at its end "
                                f"(holds {snapshot.counts()}, counts say {document['counts']})",
                                hint="copy the file again, or save a new snapshot; an edited snapshot "
                                     "must keep counts in step")
    return snapshot
