"""Which group versions the target API server serves, and its refusal of the others.

A default API server of a minor serves ``versions.rules(minor).served`` of ``resource.k8s.io``; of
Kubernetes' other groups it serves no alpha or beta version by default (``pkg/controlplane/instance.go``
lists every one of them as disabled by default, 1.34 to 1.37); ``--runtime-config`` turns them on, and a
cluster with some gates on must serve some (``Rules.apis_for``); a connected cluster says what it serves
through discovery. A document of a group version the server does not serve gets a 404 (the server has no
such resource), so it is refused.
So does a custom resource (a group outside Kubernetes' own) whose group version the connected cluster's
discovery lacks: its CRD is not installed there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from drawb import versions
from drawb.api.workloads import workload_kind
from drawb.apirules.issue import Issue
from drawb.apirules.schema import built_in_groups, built_in_kinds, schema_sets, schema_version
from drawb.errors import PROG

GROUP = "resource.k8s.io"
CONVERTIBLE = ("v1beta1", "v1beta2")  # the versions `convert` rewrites to v1 (drawb.convert.facts.SOURCES)
_PRERELEASE = re.compile(r"^v\d+(alpha|beta)\d+$")


def unserved(doc: Mapping[str, Any], label: str, kubernetes_version: str,
             served: Collection[str] | None = None, *, discovery: Callable[[str], Collection[str]] | None = None,
             enabled: Collection[str] = ()) -> Issue | None:
    """The refusal of a document whose group version the target does not serve, else None: a
    ``resource.k8s.io`` version, or an alpha or beta version of another of Kubernetes' own groups.

    ``served``: the ``resource.k8s.io`` versions a connected cluster serves, ``discovery(group)`` the versions
    of any group it serves (its discovery); without them, a default API server of ``kubernetes_version`` with
    the group versions ``enabled`` (``"scheduling.k8s.io/v1alpha2"``: by --runtime-config, or as its gates need)."""
    api_version = str(doc.get("apiVersion"))
    group, _, version = api_version.rpartition("/")
    if group != GROUP:
        return _prerelease_unserved(doc, label, kubernetes_version, discovery, enabled)
    rules, _ = versions.known_rules(kubernetes_version)
    if rules is None or version in (rules.served if served is None else served):
        return None  # older than drawb models: its schema alone judges
    server = (f"a Kubernetes {rules.minor} API server with default settings" if served is None
              else f"the connected cluster (it serves {GROUP} {', '.join(served) or 'no version'})")
    fix = f"use v1, `{PROG} convert FILE` rewrites it" if version in CONVERTIBLE else "use v1"
    if version not in rules.available:
        sets = schema_sets(api_version, str(doc.get("kind")))
        if sets and versions.parse(sets[-1]).minor < rules.number:
            fix = f"Kubernetes removed it after {versions.parse(sets[-1]).minor_text}; " + fix
    elif served is None:
        fix += f" (or start the API server with --runtime-config={api_version}=true)"
    return Issue("error", label, "apiVersion", f"{api_version} is not served by {server}: {fix}",
                 refused_by_server=True)


def stable_versions(group: str, kubernetes_version: str) -> tuple[str, ...]:
    """The versions of one of Kubernetes' own groups (not ``resource.k8s.io``) that its default API server
    serves: those neither alpha nor beta."""
    return tuple(sorted({api.rpartition("/")[2] for g, api, _ in built_in_kinds(schema_version(kubernetes_version))
                         if g == group and not _PRERELEASE.match(api.rpartition("/")[2])}))


def _prerelease_unserved(doc: Mapping[str, Any], label: str, kubernetes_version: str,
                         discovery: Callable[[str], Collection[str]] | None, enabled: Collection[str]) -> Issue | None:
    """The refusal of an alpha or beta version of one of Kubernetes' own groups (other than resource.k8s.io)
    that the target does not serve, else None."""
    api_version, kind = str(doc.get("apiVersion")), str(doc.get("kind"))
    group, _, version = api_version.rpartition("/")
    rules, _ = versions.known_rules(kubernetes_version)
    if rules is None or not _PRERELEASE.match(version):
        return None
    if group not in built_in_groups(schema_version(kubernetes_version)):
        return None
    if version in discovery(group) if discovery is not None else api_version in enabled:
        return None
    stage = "an alpha" if _PRERELEASE.match(version).group(1) == "alpha" else "a beta"
    server = (f"a Kubernetes {rules.minor} API server with default settings" if discovery is None
              else f"the connected cluster (it serves {group} {', '.join(discovery(group)) or 'no version'})")
    if schema_version(kubernetes_version) in schema_sets(api_version, kind):
        gates = rules.gates_needing_api(api_version)
        turn_on = f"--runtime-config={api_version}=true"
        turn_on += f" and the {', '.join(gates)} feature gate on" if gates else ""
        whose = "kube-apiserver" if discovery is None else "the cluster's kube-apiserver"
        fix = f"it is {stage} API, off by default: start {whose} with {turn_on}"
    else:
        others = sorted(v for _, v, k in built_in_kinds(schema_version(kubernetes_version)) if k == kind)
        having = sorted({versions.parse(v).minor_text for v in schema_sets(api_version, kind)}, key=versions.parse)
        if others:
            fix = (f"Kubernetes {rules.minor} has no {api_version}; its {kind} is {' or '.join(others)}: "
                   f"use {'that' if len(others) == 1 else 'one of those'}")
        else:
            fix = f"Kubernetes {rules.minor} has no {kind}"
            if having:
                fix += f"; {api_version} {kind} is in Kubernetes {' and '.join(having)}: target such a version"
    return Issue("error", label, "apiVersion", f"{api_version} is not served by {server}: {fix}",
                 refused_by_server=True)


def custom_unserved(doc: Mapping[str, Any], label: str, kubernetes_version: str,
                    served: Callable[[str], Collection[str]]) -> Issue | None:
    """The refusal of a custom resource whose group version a connected cluster does not serve, else None.

    ``served(group)``: the versions of ``group`` the cluster serves (its discovery). Kubernetes' own groups
    are left to ``unserved`` and the schema."""
    api_version, kind = str(doc.get("apiVersion")), str(doc.get("kind"))
    group, _, version = api_version.rpartition("/")
    if not group or group in built_in_groups(schema_version(kubernetes_version)) or version in served(group):
        return None
    workload = workload_kind(doc)
    needs = workload.installed_by if workload is not None and workload.custom else f"the CRD that defines {kind}"
    return Issue("error", label, "apiVersion", f"{api_version} {kind} is not served by the connected cluster (its "
                 f"discovery has no {api_version}): install {needs} there first; the API server refuses it until then",
                 refused_by_server=True)
