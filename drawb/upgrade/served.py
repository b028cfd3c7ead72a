"""Group versions the target does not serve: manifests written in them, and versions the cluster serves now
(by ``--runtime-config``) that a default API server of the target does not."""

from __future__ import annotations

from drawb.apirules import label, unserved
from drawb.apirules.served import GROUP
from drawb.errors import PROG
from drawb.upgrade.inputs import CLUSTER, Inputs
from drawb.upgrade.report import ERROR, WARNING, Finding


def group_versions(inputs: Inputs) -> list[Finding]:
    """A finding for each manifest of a ``resource.k8s.io`` version the target does not serve by default, and
    for each such version the cluster serves now."""
    found = []
    for item in inputs.items:
        if item.where == CLUSTER:
            continue
        refusal = unserved(item.obj, label(item.obj), inputs.target.minor)
        if refusal is None:
            continue
        message, _, fix = refusal.message.partition(": ")
        if str(item.obj.get("apiVersion")).rpartition("/")[2] in inputs.served:
            message += " (the connected cluster serves it now)"
        found.append(Finding("served", ERROR, item.where, item.label, "apiVersion", message, fix))
    for version in inputs.served:
        if version in inputs.target.served:
            continue
        found.append(Finding(
            "served", WARNING, CLUSTER, "kube-apiserver", f"--runtime-config={GROUP}/{version}",
            f"the cluster serves {GROUP}/{version}, which a default Kubernetes {inputs.target.minor} API server does not "
            f"(it serves {', '.join(inputs.target.served)}): clients and manifests using it stop working unless the "
            "flag is kept",
            f"move clients and manifests to {GROUP}/v1 (`{PROG} convert FILE` rewrites manifests), or keep "
            f"--runtime-config={GROUP}/{version}=true on the upgraded API server"))
    return found
