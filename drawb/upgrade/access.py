"""Roles the target asks more of: with ``DRAResourceClaimGranularStatusAuthorization`` on, writing a claim's
allocation or reservedFor needs the ``resourceclaims/binding`` subresource, and writing its ``status.devices``
needs ``resourceclaims/driver`` with an ``associated-node:`` or ``arbitrary-node:`` verb (the API server checks
both on every status write: ``pkg/registry/resource/utils.go``)."""

from __future__ import annotations

from drawb.access.roles import is_bootstrap, role_grants
from drawb.upgrade.inputs import Inputs
from drawb.upgrade.report import ERROR, Finding

GATE = "DRAResourceClaimGranularStatusAuthorization"
GROUP = "resource.k8s.io"
_WRITES = ("update", "patch")


def _brought(inputs: Inputs) -> bool:
    """Whether the upgrade turns the gate on: on by default in the target, off (or absent) in the cluster now."""
    now, later = inputs.current.gates.get(GATE), inputs.target.gates.get(GATE)
    on_now = now is not None and inputs.gates.get(GATE, now.default)
    return later is not None and later.default and not on_now


def status_writers(inputs: Inputs) -> list[Finding]:
    """A finding for each role (not one the API server reconciles itself) that writes claim status without the
    subresource the target's authorization asks for."""
    if not _brought(inputs):
        return []
    found = []
    for item in inputs.of("ClusterRole", "Role"):
        if is_bootstrap(item.obj):
            continue
        writes = [verb for verb in _WRITES if role_grants(item.obj, verb, GROUP, "resourceclaims/status")]
        if not writes:
            continue
        driver = any(role_grants(item.obj, verb, GROUP, "resourceslices") for verb in ("create", "update", "patch"))
        if driver:
            lacking = [verb for verb in writes if not any(
                role_grants(item.obj, f"{prefix}:{verb}", GROUP, "resourceclaims/driver", None)
                for prefix in ("associated-node", "arbitrary-node"))]
            what, rule = "status.devices (a driver's device status)", (
                f"apiGroups: [{GROUP}], resources: [resourceclaims/driver], resourceNames: [<driver name>], "
                f"verbs: [{', '.join(f'associated-node:{v}' for v in lacking)}] (arbitrary-node: for a controller "
                "off the claim's node)")
            subresource = "resourceclaims/driver"
        else:
            lacking = [verb for verb in writes if not role_grants(item.obj, verb, GROUP, "resourceclaims/binding")]
            what, rule = "status.allocation or status.reservedFor (what a scheduler writes)", (
                f"apiGroups: [{GROUP}], resources: [resourceclaims/binding], verbs: [{', '.join(lacking)}]")
            subresource = "resourceclaims/binding"
        if not lacking:
            continue
        found.append(Finding(
            "rbac", ERROR, item.where, item.label, "rules",
            f"grants {', '.join(writes)} on resourceclaims/status but not on {subresource}; from Kubernetes "
            f"{inputs.first_with_gate(GATE)} ({GATE} on by default) the API server refuses a change to {what} "
            f"without it",
            f"add the rule {{{rule}}} to this role before upgrading"))
    return found
