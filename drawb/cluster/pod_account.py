"""The ServiceAccount a pod runs as, as the API server's ServiceAccount admission plugin reads it (the
mounted account of a notebook pod is drawb.cluster.service_account's)."""

from __future__ import annotations

DEFAULT = "default"  # the account the serviceaccount controller makes in every namespace


def pod_service_account(pod: dict) -> str:
    """The ServiceAccount ``pod`` runs as: ``spec.serviceAccountName``, else the deprecated
    ``spec.serviceAccount``, else ``default``."""
    spec = pod.get("spec") or {}
    return spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT
