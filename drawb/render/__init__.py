"""Render DRA manifests from templates, validate them, export them, and apply them.

>>> r = render("single-gpu", {"template_name": "one-gpu"})   # doctest: +SKIP
>>> r.documents, r.yaml, r.export("gpu.yaml"), r.apply(cluster)   # doctest: +SKIP
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from drawb import versions
from drawb.errors import DrawbError
from drawb.apirules import (
    Issue,
    World,
    cross_reference_issues,
    default_selector_compiler,
    label,
    name_refusals,
    schema_issues,
    unserved,
)
from drawb.apirules.served import GROUP, custom_unserved
from drawb.render.catalog import TemplateInfo, get_template, list_templates
from drawb.render.engine import parse_documents, render_text
from drawb.render.errors import (
    ManifestInvalid,
    ParameterError,
    RenderError,
    TemplateError,
    TemplateNotFound,
)
from drawb.render.export import Exported, dump_documents, read_export
from drawb.render.params import CheckContext, Param, SelectorCompiler, check_value, resolve_values
from drawb.render.rendered import Rendered
from drawb.render.report import Finding, ValidationReport
from drawb.render.sources import ManifestFileError, Progress, Source, read_sources

__all__ = [
    "Exported",
    "Finding",
    "Issue",
    "ManifestFileError",
    "ManifestInvalid",
    "Param",
    "ParameterError",
    "RenderError",
    "Rendered",
    "Source",
    "TemplateError",
    "TemplateInfo",
    "TemplateNotFound",
    "ValidationReport",
    "check_sources",
    "default_selector_compiler",
    "dump_documents",
    "get_template",
    "list_templates",
    "read_export",
    "read_sources",
    "render",
    "validate_documents",
]

# Kinds without a namespace; every other kind gets the namespace render() is given.
_CLUSTER_SCOPED = {"DeviceClass", "ResourceSlice", "DeviceTaintRule", "Namespace", "Node", "PersistentVolume",
                   "ClusterRole", "ClusterRoleBinding", "PriorityClass", "StorageClass"}


def _cluster_classes(cluster: Any) -> dict[str, dict]:
    return {c["metadata"]["name"]: c for c in cluster.list("DeviceClass")}


def _discovery(cluster: Any) -> Callable[[str], list[str]]:
    """``cluster.group_versions``, asked once per group."""
    return functools.lru_cache(maxsize=None)(cluster.group_versions)


def _namespace_labels(cluster: Any):
    read: dict[str, dict | None | DrawbError] = {}  # one read per namespace, however many documents are in it

    def labels(name: str) -> dict | None:
        """The namespace's labels, None if it does not exist; PermissionError where RBAC forbids reading it."""
        if name not in read:
            try:
                ns = cluster.get("Namespace", name)
                read[name] = None if ns is None else (ns.get("metadata") or {}).get("labels") or {}
            except DrawbError as exc:
                if getattr(exc, "status", None) != 403:
                    raise
                read[name] = exc
        if isinstance(read[name], DrawbError):
            raise PermissionError(str(read[name]))
        return read[name]

    return labels


def validate_documents(
    documents: list[dict],
    *,
    kubernetes_version: str = versions.DEFAULT,
    cluster: Any = None,
    compile_selector: SelectorCompiler | None = None,
    progress: Progress | None = None,
) -> list[Issue]:
    """The API server's verdict and drawb's cross-reference findings for ``documents`` (errors and warnings);
    raises nothing. A document of a ``resource.k8s.io`` version the target does not serve (a ``cluster``'s
    discovery, else a default API server of ``kubernetes_version``) gets that refusal alone; the others are
    checked by the schema of their own group version. ``progress(step, done, total)`` is told of each document."""
    issues: list[Issue] = []
    served = cluster.group_versions(GROUP) if cluster is not None else None
    discovery = _discovery(cluster) if cluster is not None else None
    checked = []
    for done, doc in enumerate(documents, 1):
        if progress:
            progress("checking", done, len(documents))
        refused = unserved(doc, label(doc), kubernetes_version, served, discovery=discovery)
        if refused is not None:
            issues.append(refused)
            continue
        checked.append(doc)
        missing = custom_unserved(doc, label(doc), kubernetes_version, discovery) if cluster is not None else None
        issues += [missing] if missing is not None else name_refusals(doc) + schema_issues(doc, label(doc), kubernetes_version)
    world = World(
        kubernetes_version=kubernetes_version,
        compile_selector=compile_selector or default_selector_compiler,
        cluster_classes=_cluster_classes(cluster) if cluster is not None else None,
        namespace_labels=_namespace_labels(cluster) if cluster is not None else None,
    )
    return issues + cross_reference_issues(checked, world)


def check_sources(
    sources: list[Source],
    *,
    kubernetes_version: str = versions.DEFAULT,
    cluster: Any = None,
    devices: Any = None,
    target: str | None = None,
    progress: Progress | None = None,
) -> ValidationReport:
    """drawb's whole validation of the user's files, together (a pod in one file may use a template of another):
    schema, cross-references, and with a ``cluster`` its DeviceClasses and, given its ``devices`` frame,
    whether each request's selectors name real attributes, match devices and fit one node; ``progress(step,
    done, total)`` is told of each document."""
    documents = [doc for source in sources for doc in source.documents]
    origin: dict[str, str] = {}
    for source in sources:
        for doc in source.documents:
            origin.setdefault(label(doc), source.name)
    issues = validate_documents(documents, kubernetes_version=kubernetes_version, cluster=cluster, progress=progress)
    if devices is not None and cluster is not None:
        from drawb.render.fit import device_fit_issues

        classes = {**_cluster_classes(cluster), **{(d.get("metadata") or {}).get("name"): d for d in documents
                                                   if d.get("kind") == "DeviceClass"}}
        issues += device_fit_issues(documents, devices, classes, kubernetes_version=kubernetes_version,
                                    progress=progress)
    findings = [Finding(s.name, p) for s in sources for p in s.problems]
    findings += [Finding(origin.get(i.document, "?"), i) for i in issues]
    return ValidationReport(len(sources), len(documents), target or f"Kubernetes {kubernetes_version}", findings)


def render(
    name: str,
    values: Mapping[str, Any] | None = None,
    *,
    namespace: str | None = None,
    cluster: Any = None,
    kubernetes_version: str | None = None,
    template_dirs: Sequence[str | Path] = (),
    compile_selector: SelectorCompiler | None = None,
) -> Rendered:
    """Render template ``name`` with ``values``: check values, render, validate; ManifestInvalid if invalid.

    With a ``cluster``, its server version is the target, and a DeviceClass it lacks is a warning; without one, ``kubernetes_version`` (default 1.34) is the target.
    """
    info = get_template(name, template_dirs)
    version = kubernetes_version or (cluster.server_version() if cluster is not None else versions.DEFAULT)
    try:
        versions.parse(version)
    except versions.NotAKubernetesVersion:
        raise ParameterError(f"not a Kubernetes version: {version!r}; write e.g. 1.34 or v1.34.3",
                             parameter="kubernetes_version") from None
    compiler = compile_selector or default_selector_compiler
    ctx = CheckContext(kubernetes_version=version, compile_selector=compiler, template=info.name)
    given = dict(values or {})
    checked = resolve_values(info.name, info.params, given, ctx)
    documents = parse_documents(info, render_text(info, checked))
    if namespace is not None:
        check_value(Param("namespace", "dns_label", "namespace of the manifests"), namespace, ctx)
        for doc in documents:
            if doc["kind"] not in _CLUSTER_SCOPED:
                doc.setdefault("metadata", {})["namespace"] = namespace

    def revalidate(target: Any) -> list[Issue]:
        issues = validate_documents(documents, kubernetes_version=version, cluster=target, compile_selector=compiler)
        if any(i.level == "error" for i in issues):
            raise ManifestInvalid(info.name, issues)
        return issues

    issues = revalidate(cluster)
    return Rendered(
        template=info.name,
        values=copy.deepcopy(checked),
        documents=documents,
        namespace=namespace,
        kubernetes_version=version,
        issues=issues,
        revalidate=revalidate,
    )
