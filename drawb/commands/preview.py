"""``preview``: where a pod, claim or template fits now, and the devices each node would give it.

The workload is ``pod/NAME``, ``claim/NAME``, ``template/NAME`` or a bare NAME (a pod, else a
claim, else a template of that name), in the cluster or in a manifest file (``-f FILE``, whose
objects count as if applied); ``%dra render NAME --preview`` previews a rendered template.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from drawb.commands.registry import JsonResult, arg, command
from drawb.errors import PROG, UsageError
from drawb.session import Session

if TYPE_CHECKING:
    from drawb.plan import Workload
    from drawb.plan.report import Report

TARGET = arg("target", nargs="?", help="pod/NAME, claim/NAME, template/NAME or NAME (a pod, claim or template)")
FILE = arg("-f", "--file", help="a manifest file: its Pod, ResourceClaim or ResourceClaimTemplate (as if applied)")
NAMESPACE = arg("-n", "--namespace", help="the workload's namespace (default: the namespace option)")
JSON = arg("--json", action="store_true", help="the result as JSON")


def _split(target: str) -> tuple[str | None, str]:
    from drawb.plan.workload import KINDS

    kind, sep, name = target.partition("/")
    if not sep:
        return None, target
    if kind.lower() not in KINDS or not name:
        raise UsageError(f"{target!r}: expected pod/NAME, claim/NAME, template/NAME or a bare NAME",
                         hint="e.g. pod/gpu-pod or template/single-gpu")
    return KINDS[kind.lower()], name


class _Finder:
    """Objects by kind, name and namespace: the file's first, then the cluster's."""

    def __init__(self, cluster, documents: list[dict], default_namespace: str, source: str):
        self.cluster = cluster
        self.documents = documents
        self.default_namespace = default_namespace
        self.source = source

    def _from_documents(self, kind: str, name: str, namespace: str) -> dict | None:
        from drawb.plan.errors import OtherNamespace

        for obj in self.documents:
            if obj.get("kind") == kind and obj["metadata"].get("name") == name:
                theirs = obj["metadata"].get("namespace") or self.default_namespace
                if theirs != namespace:
                    raise OtherNamespace(f"{kind} '{name}' of {self.source} is in namespace '{theirs}', not '{namespace}'",
                                         hint=f"pods use claims and templates of their own namespace; use -n {theirs} "
                                              "or fix metadata.namespace")
                return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}
        return None

    def __call__(self, kind: str, name: str, namespace: str) -> dict | None:
        """The object in ``namespace``; None, or OtherNamespace when it is in another one."""
        found = self.here(kind, name, namespace)
        if found is None:
            self.raise_if_elsewhere(kind, name, namespace)
        return found

    def here(self, kind: str, name: str, namespace: str) -> dict | None:
        """The object in ``namespace`` (one GET at most), or None."""
        found = self._from_documents(kind, name, namespace)
        return found if found is not None else self.cluster.get(kind, name, namespace)

    def raise_if_elsewhere(self, kind: str, name: str, namespace: str) -> None:
        """OtherNamespace when an object ``name`` of ``kind`` is in other namespaces: every namespace is listed for
        this error alone, where RBAC allows it (else the object is just not found here)."""
        from drawb.cluster.refusal import RbacRefused
        from drawb.plan.errors import OtherNamespace

        try:
            listed = self.cluster.list(kind)
        except RbacRefused:
            return
        elsewhere = sorted({(o["metadata"].get("namespace") or "") for o in listed if o["metadata"].get("name") == name})
        if elsewhere:
            raise OtherNamespace(f"{kind} '{name}' is not in namespace '{namespace}'; it is in {', '.join(elsewhere)}",
                                 hint=f"use -n {elsewhere[0]}")


def workload_for(session: Session, target: str | None, file: str | None, namespace: str | None,
                 documents: list[dict] | None = None, source: str = "", extended: bool = False) -> Workload:
    """The workload a ``preview``/``capacity`` command line names (``extended``: a pod that asks only for
    extended resources, such as ``nvidia.com/gpu`` from a device plugin, is one too)."""
    from drawb.plan import ObjectNotFound, resolve
    from drawb.plan.errors import NotAManifest
    from drawb.plan.manifests import default_target, parse_manifests

    namespace = namespace or session.namespace
    if file:
        path = Path(file).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise NotAManifest(f"cannot read {file}: {getattr(exc, 'strerror', None) or exc}",
                               hint="check the path") from None
        documents, source = parse_manifests(text, file), file
    documents = documents or []
    finder = _Finder(session.cluster, documents, namespace, source)
    if target is None:
        if not documents:
            raise UsageError("name what to place: pod/NAME, claim/NAME, template/NAME, or -f FILE",
                             hint=f"e.g. `{PROG} preview template/NAME`")
        kind, name = default_target(documents, source)
        return resolve(kind, name, namespace, finder, extended)
    kind, name = _split(target)
    if kind is not None:
        return resolve(kind, name, namespace, finder, extended)
    kinds = ("Pod", "ResourceClaim", "ResourceClaimTemplate")
    for kind in kinds:
        if finder.here(kind, name, namespace) is not None:
            return resolve(kind, name, namespace, finder, extended)
    for kind in kinds:
        finder.raise_if_elsewhere(kind, name, namespace)
    raise ObjectNotFound(f"no pod, ResourceClaim or ResourceClaimTemplate '{name}' in namespace '{namespace}'",
                         hint=f"`{PROG} pods` and `{PROG} claims` list them")


def preview_workload(session: Session, workload: Workload) -> Report:
    """Preview ``workload`` on the session's cluster."""
    from drawb.plan import preview
    from drawb.plan.read import read_view
    from drawb.plan.report import preview_report

    from drawb.api.resourcefit import extended_requests, resource_fit

    state = read_view(session.cluster, session.rules_version)
    fit, note = None, None
    if extended_requests(workload.pod):  # the pods bound to each node take their share
        pods, note = _bound_pods(session, workload.namespace)
        fit = resource_fit(workload.pod, pods, state.classes, state.feature_gates.get("DRAExtendedResource", False),
                           state.flavor.minor)
    report = preview_report(preview(workload, state, fit), state.where, state.simulated)
    if note:
        report.sentence += f" ({note})"
    return report


def _bound_pods(session: Session, namespace: str) -> tuple[list[dict], str | None]:
    """The pods of every namespace (their extended resources take each node's share); where RBAC refuses that,
    those of ``namespace``, and a note that the nodes' use by other namespaces' pods is not counted."""
    from drawb.cluster.refusal import RbacRefused

    try:
        return session.cluster.list("Pod"), None
    except RbacRefused as exc:
        return session.cluster.list("Pod", namespace), (
            f"pods of namespace {namespace} only were read ({exc.verb} on pods at the cluster scope was refused): "
            "extended resources that pods of other namespaces use on each node are not counted, so a node may have "
            "less room than shown")


@command("preview", "Where a pod, claim or template fits now: per node, the devices drawb's allocator would give "
         "it (nodes in the scheduler's order; the simulated scheduler's pick marked).",
         TARGET, FILE, NAMESPACE, JSON)
def preview_command(session: Session, args, cell):
    report = preview_workload(session, workload_for(session, args.target, args.file, args.namespace, extended=True))
    return JsonResult(report.to_dict(), report.exit_status) if args.json else report
