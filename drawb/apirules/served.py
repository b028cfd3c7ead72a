"""Which ``resource.k8s.io`` versions the target API server serves, and its refusal of the others.

A default API server of a minor serves ``versions.rules(minor).served``; ``--runtime-config`` can turn on
the rest of ``available``; a connected cluster says what it serves through discovery. A document of a
group version the server does not serve gets a 404 (the server has no such resource), so it is refused.
So does a custom resource (a group outside Kubernetes' own) whose group version the connected cluster's
discovery lacks: its CRD is not installed there.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

from drawb import versions
from drawb.api.workloads import workload_kind
from drawb.apirules.issue import Issue
from drawb.apirules.schema import built_in_groups, schema_sets, schema_version
from drawb.errors import PROG

GROUP = "resource.k8s.io"
CONVERTIBLE = ("v1beta1", "v1beta2")  # the versions `convert` rewrites to v1 (drawb.convert.facts.SOURCES)


def unserved(doc: Mapping[str, Any], label: str, kubernetes_version: str,
             served: Collection[str] | None = None) -> Issue | None:
    """The refusal of a ``resource.k8s.io`` document whose version the target does not serve, else None.

    ``served``: the versions a connected cluster serves (its discovery); None: a default API server of
    ``kubernetes_version``."""
    api_version = str(doc.get("apiVersion"))
    group, _, version = api_version.rpartition("/")
    if group != GROUP:
        return None
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
