"""``validate``, ``apply`` and ``delete``: the user's own manifests, checked, applied and cleaned up.

``validate`` runs drawb's whole validation (schema of the target version, cross-references, DeviceClasses
and devices of the connected cluster) and exits 1 on errors, for CI. ``apply`` validates, dry-runs, then
applies, keeping each document's namespace: ``-n`` (or the session's namespace) only fills a missing one.
"""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from drawb.cluster.protocol import (
    KINDS,
    OTHER_KINDS,
    ClusterError,
    NotConnected,
    NotManagedByDrawb,
    kind_of,
)
from drawb.cluster.refusal import Right, require_rights
from drawb.commands.progress import Progress, progress_bar
from drawb.commands.registry import arg, command
from drawb.errors import PROG, DrawbError, UsageError
from drawb.session import Session

if TYPE_CHECKING:
    from drawb import render as rendering

_PATHS = arg("paths", nargs="*", metavar="FILE", help="manifest files or folders; - reads standard input")
_CELL = "YAML manifests"


class InvalidManifests(DrawbError):
    """Manifests with errors: nothing was applied."""

    title = "InvalidManifest"
    hint = f"fix them (`{PROG} validate FILE` lists every finding); nothing was applied"


def _sources(session: Session, paths: list[str], cell: str | None, progress: Progress) -> list[rendering.Source]:
    from drawb import render as rendering

    if cell is not None and cell.strip():
        return (rendering.read_sources([p for p in paths if p != "-"], None, progress=progress)
                + rendering.read_sources([], cell, "<cell>", progress=progress))
    if not paths:
        raise UsageError("name the manifests: files, folders, or - for standard input",
                         hint=f"e.g. `{PROG} validate pod.yaml`" + (", or %%dra validate with YAML in the cell"
                                                                    if session.prog == "%dra" else ""))
    text = None
    if "-" in paths:
        if session.prog == "%dra":
            raise UsageError("- (standard input) is for the command line", hint="put the YAML in a %%dra cell instead")
        text = sys.stdin.read()
    return rendering.read_sources(paths, text, progress=progress)


def _check(session: Session, sources: list[rendering.Source], offline: bool, version: str | None, progress: Progress):
    from drawb import render as rendering

    if offline:
        target_version = version or session.rules_version
        report = rendering.check_sources(sources, kubernetes_version=target_version,
                                         target=f"Kubernetes {target_version} rules (no cluster)", progress=progress)
    else:
        cluster = session.cluster
        target_version = version or cluster.server_version()
        report = rendering.check_sources(sources, kubernetes_version=target_version, cluster=cluster,
                                         devices=session.devices(),
                                         target=f"Kubernetes {target_version} and the {cluster.description}",
                                         progress=progress)
    for finding in report.findings:  # a finding that names a command names this front end's
        if PROG in finding.issue.message:
            finding.issue = replace(finding.issue, message=finding.issue.message.replace(PROG, session.prog))
    return report


@command(
    "validate",
    "Validate your manifests (files, folders, - or the cell): schema, references, classes and devices of the cluster.",
    _PATHS,
    arg("--no-cluster", dest="offline", action="store_true",
        help="check schema and references only, without the connected cluster's classes and devices"),
    arg("--kubernetes-version", dest="version", help="the version whose schema applies (default: the cluster's)"),
    cell=_CELL,
)
def validate(session: Session, args, cell) -> rendering.ValidationReport:
    """Every finding about the manifests; the CLI exits 1 when one is an error."""
    with progress_bar(session, "validate") as bar:
        return _check(session, _sources(session, args.paths, cell, bar), args.offline, args.version, bar)


def _namespaced(kind: str) -> bool:
    from drawb.render import _CLUSTER_SCOPED

    known = KINDS.get(kind) or OTHER_KINDS.get(kind)
    return known.namespaced if known is not None else kind not in _CLUSTER_SCOPED


def place_in_namespaces(documents: list[dict], flag: str | None, default: str) -> None:
    """Fill each namespaced document's missing namespace with ``flag`` (``-n``), else ``default``; a document
    that names another namespace than ``-n`` is a UsageError (never overwritten)."""
    for doc in documents:
        if not _namespaced(str(doc.get("kind"))):
            continue
        meta = doc.setdefault("metadata", {})
        own = meta.get("namespace")
        if own and flag and own != flag:
            raise UsageError(f"{doc.get('kind')}/{meta.get('name')} is in namespace {own!r}, but -n says {flag!r}",
                             hint="drop -n (each document keeps its own namespace), or change the document")
        if not own:
            meta["namespace"] = flag or default


@dataclass
class Applied:
    """What ``apply`` did: the objects, and who accepted them. Shows as a table under the status line."""

    status: str
    objects: list[dict]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the cluster does next (workloads' controllers)

    def rows(self) -> list[tuple[str, str, str]]:
        """``(kind, namespace, name)`` of each object."""
        return [(o.get("kind", ""), (o.get("metadata") or {}).get("namespace") or "",
                 (o.get("metadata") or {}).get("name", "")) for o in self.objects]

    def terminal_notes(self) -> list[str]:
        """The status line and warnings, which a terminal prints on stderr."""
        return [self.status, *self.notes, *self.warnings]

    def __str__(self) -> str:
        width = max([len(k) + len(n) + 1 for k, _, n in self.rows()] + [6])
        return "\n".join(f"{(k + '/' + n).ljust(width)}  {ns}".rstrip() for k, ns, n in self.rows())

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text("\n".join([*self.terminal_notes(), str(self)]))

    def _repr_html_(self) -> str:
        warnings = "".join(f"<li>{html.escape(w)}</li>" for w in [*self.notes, *self.warnings])
        rows = "".join(f"<tr><td>{html.escape(k)}/{html.escape(n)}</td><td>{html.escape(ns)}</td></tr>"
                       for k, ns, n in self.rows())
        return (f"<div><b>{html.escape(self.status)}</b>" + (f"<ul>{warnings}</ul>" if warnings else "")
                + f"<table><tr><th>object</th><th>namespace</th></tr>{rows}</table></div>")


@command(
    "apply",
    "Validate, dry-run, then apply your manifests all or none (whatever stops it rolls back what it wrote), each "
    "keeping its own namespace (-n fills a missing one).",
    _PATHS,
    arg("-f", "--filename", dest="files", action="append", default=[], metavar="FILE",
        help="a manifest file or folder (as kubectl apply -f); repeat for more"),
    arg("-n", "--namespace", help="namespace for documents that name none (default: the namespace option)"),
    arg("--dry-run", action="store_true", help="stop after the server-side dry run"),
    cell=_CELL,
)
def apply(session: Session, args, cell) -> Applied:
    """Refuse invalid manifests, then apply through the connected cluster (everything is dry-run first), all or
    none: the cluster rolls back what an interrupted or refused apply wrote and says so."""
    try:
        return _apply(session, args, cell)
    except KeyboardInterrupt as exc:
        if not args.dry_run and not getattr(exc, "__notes__", None):  # stopped before the cluster's apply began
            exc.add_note("nothing was written: interrupted before the first write")
        raise


def _apply(session: Session, args, cell) -> Applied:
    from drawb.render.rendered import answered_by, unchecked_note

    with progress_bar(session, "apply") as bar:
        sources = _sources(session, [*args.files, *args.paths], cell, bar)
        require_rights(session.cluster, f"{session.prog} apply",  # before checking them against the cluster's devices
                       document_rights([doc for source in sources for doc in source.documents], ("get", "create", "patch"),
                               args.namespace or session.namespace))
        report = _check(session, sources, False, None, bar)
        if report.errors:
            lines = "\n".join(f"  - {f}" for f in report.errors)
            raise InvalidManifests(f"{len(report.errors)} error(s) in the manifests:\n{lines}")
        documents = [doc for source in sources for doc in source.documents]
        if not documents:
            raise UsageError("the manifests hold no documents", hint="check the files")
        place_in_namespaces(documents, args.namespace, session.namespace)
        cluster = session.cluster
        try:
            objects = cluster.apply(documents, dry_run=args.dry_run, progress=bar)  # every object is dry-run first
        except ClusterError as exc:
            if exc.index is not None:  # the server refused it, or never answered
                what = "got no answer" if isinstance(exc, NotConnected) else "was refused"
                exc.args = (f"{_document_at(sources, exc.index)} {what}: {exc}",)
            raise
    status = (f"{'dry run' if args.dry_run else 'applied'}: {len(objects)} object(s), accepted by "
              f"{answered_by(cluster)}{unchecked_note(objects)}")
    notes = [] if args.dry_run else _workload_notes(objects, session.prog)
    return Applied(status, objects, [str(f) for f in report.warnings], notes)


_CONTROLLED_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")


def _workload_notes(objects: list[dict], prog: str) -> list[str]:
    """A note naming the applied workloads whose pods the cluster's controllers now create."""
    workloads = [o for o in objects if o.get("kind") in _CONTROLLED_KINDS]
    if not workloads:
        return []
    names = ", ".join(f"{o['kind']}/{o['metadata']['name']}" for o in workloads)
    namespaces = sorted({o["metadata"].get("namespace") or "default" for o in workloads})
    if len(namespaces) > 1:
        return [f"{names}: the cluster's controllers create the pods; follow them with `{prog} pods --all -A`"]
    return [f"{names}: the cluster's controllers create the pods; follow them with `{prog} pods --all -n {namespaces[0]}` "
            f"and `{prog} events -n {namespaces[0]}`"]


def _document_at(sources: list[rendering.Source], index: int) -> str:
    """``FILE document N (Kind/name)`` of the ``index``-th document of ``sources`` (N counts from 1 in its file)."""
    from drawb.apirules import label

    for source in sources:
        if index < len(source.documents):
            return f"{source.name} document {index + 1} ({label(source.documents[index])})"
        index -= len(source.documents)
    raise IndexError(index)


def kind_named(text: str) -> str:
    """The kind a user wrote (``pod``, ``pods``, ``ResourceClaim``, ``resourceclaims``), or a UsageError."""
    lowered = text.lower()
    for kind in [*KINDS.values(), *OTHER_KINDS.values()]:
        if lowered in (kind.kind.lower(), kind.plural):
            return kind.kind
    raise UsageError(f"unknown kind {text!r}", hint=f"kinds: {', '.join(k.lower() for k in KINDS)}")


@dataclass
class Deleted:
    """What ``delete`` removed."""

    kind: str
    name: str
    namespace: str | None

    def __repr__(self) -> str:
        where = f" in namespace {self.namespace}" if self.namespace else ""
        return f"deleted {self.kind.lower()}/{self.name}{where}"


@command(
    "delete",
    "Delete an object drawb created (KIND NAME or KIND/NAME); others only with --force-unmanaged.",
    arg("kind", help="kind, e.g. pod, resourceclaim, resourceclaimtemplate, deviceclass (or KIND/NAME)"),
    arg("name", nargs="?", help="object name"),
    arg("-n", "--namespace", help="the object's namespace (default: the namespace option)"),
    arg("--force-unmanaged", action="store_true", help="also delete an object drawb did not create"),
)
def delete(session: Session, args, cell) -> Deleted:
    """Delete one object, refusing any drawb did not create unless forced."""
    kind_text, name = args.kind, args.name
    if name is None:
        kind_text, slash, name = args.kind.partition("/")
        if not slash or not name:
            raise UsageError("delete needs a kind and a name", hint=f"e.g. `{PROG} delete pod cuda-check`")
    kind = kind_named(kind_text)
    namespace = (args.namespace or session.namespace) if kind_of(kind).namespaced else None
    require_rights(session.cluster, f"{session.prog} delete",
                   document_rights([{"kind": kind}], ("get", "delete"), namespace))
    try:
        session.cluster.delete(kind, name, namespace, force_unmanaged=args.force_unmanaged)
    except NotManagedByDrawb as exc:
        raise NotManagedByDrawb(str(exc), hint="add --force-unmanaged to delete it anyway") from None
    except ClusterError as exc:
        if exc.status == 404:
            where = f" in namespace {namespace!r}" if namespace else ""
            raise ClusterError(f"no {kind} {name!r}{where}", status=404, reason="NotFound",
                               hint="check the name, and the namespace (-n NAMESPACE)") from None
        raise
    return Deleted(kind, name, namespace)


def document_rights(documents: list[dict], verbs: tuple[str, ...], namespace: str | None) -> list[Right]:
    """``verbs`` on the kind of every document, in its namespace or ``namespace`` (kinds drawb does not know are
    left to the server)."""
    rights = []
    for doc in documents:
        known = KINDS.get(doc.get("kind")) or OTHER_KINDS.get(doc.get("kind"))
        if known is None:
            continue
        group = known.api_version.rpartition("/")[0]
        where = ((doc.get("metadata") or {}).get("namespace") or namespace) if known.namespaced else None
        rights += [Right(verb, known.plural, group, where) for verb in verbs]
    return list(dict.fromkeys(rights))
