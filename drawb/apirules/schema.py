"""Schema validation of manifests against the OpenAPI schemas of a Kubernetes version (strict: no unknown fields),
each document by the schema of its own group version (a served v1beta1 claim by v1beta1's).

The schemas are the ones shipped by ``kubernetes-validate`` (1.25 to 1.37, ``resource.k8s.io/v1`` from 1.34).
jsonschema is imported on first use, without ``rfc3987_syntax`` (see ``_jsonschema``).
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from drawb import versions
from drawb.api.workloads import dotted, workload_kind
from drawb.apirules.issue import Issue
from drawb.apirules.quickcheck import compile_check

if TYPE_CHECKING:
    import jsonschema
    import referencing


@functools.cache
def _jsonschema():
    """jsonschema, imported without its optional ``rfc3987_syntax`` format checker.

    Importing jsonschema imports every optional format library it finds; ``rfc3987_syntax`` (installed with
    Jupyter, through ``jsonschema[format-nongpl]``) builds lark grammars at import, 2-25 s. drawb validates
    without a format checker (``format`` is an annotation to jsonschema by default, and the API server does
    not check these formats either), so that import buys nothing; blocking it only for this import leaves the
    library importable by anyone else later.
    """
    blocked = "rfc3987_syntax" not in sys.modules
    if blocked:
        sys.modules["rfc3987_syntax"] = None  # an import of it now raises ImportError, which jsonschema skips
    try:
        import jsonschema
    finally:
        if blocked and sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]
    return jsonschema


@functools.cache
def _kv():
    """kubernetes-validate's schema access (it imports jsonschema: through ``_jsonschema`` first)."""
    _jsonschema()
    from kubernetes_validate import utils

    return utils


@functools.lru_cache(maxsize=32)
def schema_version(kubernetes_version: str) -> str:
    """The newest schema set not newer than ``kubernetes_version`` (``v1.34.3`` -> ``1.34.0``)."""
    try:
        target = versions.parse(kubernetes_version)
    except versions.NotAKubernetesVersion:
        raise ValueError(f"not a Kubernetes version: {kubernetes_version!r} (write e.g. 1.34 or v1.34.3)") from None
    wanted = (target.major, target.minor)
    sets = [v for v in _kv().all_versions() if tuple(int(x) for x in v.split(".")[:2]) <= wanted]
    if not sets:
        raise ValueError(f"no schemas for Kubernetes {kubernetes_version}; oldest known: {_kv().all_versions()[0]}")
    return sets[-1]


@functools.lru_cache(maxsize=4)
def _registry(version: str) -> referencing.Registry:
    _jsonschema()
    import referencing

    defs = _kv().schema_contents(f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version)
    return referencing.Resource.from_contents(defs) @ referencing.Registry()


@functools.lru_cache(maxsize=64)
def _validator(version: str, api_version: str, kind: str) -> jsonschema.protocols.Validator | None:
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = _kv().schema_contents(f"kubernetes-json-schema/v{version}-local-strict/{kind.lower()}-{group}.json", version)
    except FileNotFoundError:
        return None
    return _jsonschema().Draft202012Validator(schema, registry=_registry(version))


@functools.lru_cache(maxsize=64)
def _quick_check(version: str, api_version: str, kind: str) -> Callable[[Any], bool] | None:
    """The quick valid-or-not check of ``kind``'s schema (``drawb.apirules.quickcheck``), or None."""
    validator = _validator(version, api_version, kind)
    defs = _kv().schema_contents(f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version)
    return compile_check(validator.schema, defs) if validator is not None else None


def _path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _message(err: jsonschema.ValidationError) -> str:
    jsonschema = _jsonschema()
    if err.validator == "additionalProperties":
        m = re.search(r"\((.*) (?:was|were) unexpected\)", err.message)
        return f"unknown field(s) {m.group(1) if m else err.message}"
    if err.validator == "oneOf" and err.context:
        return jsonschema.exceptions.best_match(err.context).message
    return err.message


@functools.lru_cache(maxsize=64)
def schema_sets(api_version: str, kind: str) -> tuple[str, ...]:
    """The schema sets (``1.30.0``, ...) that have ``kind`` of ``api_version``, oldest first."""
    return tuple(v for v in _kv().all_versions() if _validator(v, api_version, kind))


@functools.lru_cache(maxsize=4)
def _built_in(version: str) -> tuple[tuple[str, str, str], ...]:
    """``(group, apiVersion, kind)`` of every kind Kubernetes ``version`` serves by itself (``""``: the core group)."""
    defs = _kv().schema_contents(f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version)
    return tuple((gvk.get("group", ""), "/".join(p for p in (gvk.get("group"), gvk["version"]) if p), gvk["kind"])
                 for d in defs.get("$defs", {}).values() for gvk in d.get("x-kubernetes-group-version-kind") or [])


def built_in_kinds(version: str) -> tuple[tuple[str, str, str], ...]:
    """``(group, apiVersion, kind)`` of every kind Kubernetes ``version`` has by itself."""
    return _built_in(version)


@functools.lru_cache(maxsize=4)
def built_in_groups(version: str) -> frozenset[str]:
    """The API groups Kubernetes ``version`` serves by itself (``""`` is the core group)."""
    return frozenset(group for group, _, _ in _built_in(version))


def _no_api_version(doc: dict, label: str, version: str) -> Issue:
    """The refusal of a document without ``apiVersion`` (the API server answers 400: it cannot decode it)."""
    kind = doc.get("kind")
    known = sorted({api_version for _, api_version, k in _built_in(version) if k == kind})
    hint = f": a {kind} is {' or '.join(known)}" if known and len(known) <= 3 else ": add the group/version of its kind"
    return Issue("error", label, "apiVersion", f"apiVersion is not set, so the API server cannot decode the document "
                 f"(400 BadRequest){hint}", refused_by_server=True)


def _unknown_kind(doc: dict, label: str, version: str) -> Issue:
    """The finding for a kind without a schema: an error in a group Kubernetes serves itself (the API server
    refuses it), else a warning: a custom resource, which only a cluster with its CRD serves."""
    api_version, kind = str(doc.get("apiVersion")), str(doc.get("kind"))
    what, minor = f"{api_version} {kind}", version[:-2]
    workload = workload_kind(doc)
    if workload is not None and workload.custom:
        templates = ", ".join(dotted(p.path) for p in workload.pods)
        return Issue("warning", label, "", f"CustomResource: {kind} ({api_version}) is a custom resource: the target "
                     f"cluster must have {workload.installed_by} installed; drawb checks only its pod templates "
                     f"({templates.replace('*', '<each>')})")
    if api_version.rpartition("/")[0] not in built_in_groups(version):
        return Issue("warning", label, "", f"UnknownKind: {what} is not part of Kubernetes {minor}: a custom resource "
                     "the target cluster must have installed (its CRD); drawb does not check it")
    sets = schema_sets(api_version, kind)
    if sets and versions.parse(sets[0]).minor > versions.parse(version).minor:
        return Issue("error", label, "", f"{what} is not in the API of Kubernetes {minor}; it is served from "
                     f"{sets[0][:-2]} on")
    if sets:
        return Issue("error", label, "", f"{what} is not in the API of Kubernetes {minor}; Kubernetes "
                     f"{sets[0][:-2]} to {sets[-1][:-2]} served it")
    return Issue("error", label, "", f"Kubernetes {minor} has no schema for {what}; check apiVersion and kind")


def schema_issues(doc: dict, label: str, kubernetes_version: str) -> list[Issue]:
    """Problems with ``doc`` against the strict schema of its kind in ``kubernetes_version``."""
    version = schema_version(kubernetes_version)
    if not doc.get("apiVersion"):
        return [_no_api_version(doc, label, version)]
    validator = _validator(version, str(doc.get("apiVersion")), str(doc.get("kind")))
    if validator is None:
        return [_unknown_kind(doc, label, version)]
    quick = _quick_check(version, str(doc.get("apiVersion")), str(doc.get("kind")))
    if quick is not None and quick(doc):
        return []  # it fits: jsonschema would find nothing (and takes a hundred times as long to say so)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [Issue("error", label, _path(e.absolute_path), _message(e), refused_by_server=True) for e in errors]
