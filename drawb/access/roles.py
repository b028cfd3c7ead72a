"""Reading RBAC roles (ClusterRoles and Roles as the API server holds them): what a role's rules grant,
matched as the RBAC authorizer matches them (``*`` for verbs, groups and resources, ``resource/*`` and
``*/subresource``, ``resourceNames``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

BOOTSTRAP_LABEL = "kubernetes.io/bootstrapping"  # "rbac-defaults": roles the API server reconciles at start


def _resource_matches(rule_resource: str, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    if rule_resource in ("*", combined):
        return True
    if not subresource:
        return False
    return rule_resource in (f"{resource}/*", f"*/{subresource}")


def rule_grants(rule: Mapping[str, Any], verb: str, group: str, resource: str, name: str | None = "") -> bool:
    """Whether one PolicyRule grants ``verb`` on ``resource`` (``pods``, ``resourceclaims/status``) of API
    ``group`` ("" the core group), for the object ``name`` ("" for a request naming none, None for some name)."""
    verbs = rule.get("verbs") or ()
    if verb not in verbs and "*" not in verbs:
        return False
    groups = rule.get("apiGroups") or ()
    if group not in groups and "*" not in groups:
        return False
    plural, _, subresource = resource.partition("/")
    if not any(_resource_matches(r, plural, subresource) for r in rule.get("resources") or ()):
        return False
    names = rule.get("resourceNames") or ()
    return not names or name is None or name in names


def role_grants(role: Mapping[str, Any], verb: str, group: str, resource: str, name: str | None = "") -> bool:
    """Whether any rule of a ClusterRole or Role grants ``verb`` on ``resource`` of ``group`` (see rule_grants)."""
    return any(rule_grants(rule, verb, group, resource, name) for rule in role.get("rules") or ())


def is_bootstrap(role: Mapping[str, Any]) -> bool:
    """Whether the API server made the role itself and reconciles it at every start (``system:kube-scheduler``)."""
    return ((role.get("metadata") or {}).get("labels") or {}).get(BOOTSTRAP_LABEL) == "rbac-defaults"
