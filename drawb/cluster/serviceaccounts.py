"""ServiceAccounts as the API server's admission sees them: the account a pod runs as, and the refusal of a
pod whose account does not exist (the ServiceAccount admission plugin, on creation only)."""

from __future__ import annotations

DEFAULT = "default"  # the account the serviceaccount controller makes in every namespace


def pod_service_account(pod: dict) -> str:
    """The ServiceAccount ``pod`` runs as: ``spec.serviceAccountName``, else the deprecated
    ``spec.serviceAccount``, else ``default``."""
    spec = pod.get("spec") or {}
    return spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT
