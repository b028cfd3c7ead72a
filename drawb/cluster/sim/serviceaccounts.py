"""ServiceAccounts in the simulated cluster, as kube-controller-manager and kube-apiserver keep them.

The serviceaccount controller makes a ``default`` ServiceAccount in every namespace. The ServiceAccount
admission plugin, when a pod is created, writes the account the pod runs as into ``spec.serviceAccountName``
(and the deprecated ``spec.serviceAccount``) and refuses the pod (403 Forbidden) when that account does not
exist, in the words kube-apiserver uses; a workload controller then records ``FailedCreate`` and makes no pod
until the account exists. Not simulated: the token volume the plugin mounts into each container.
"""

from __future__ import annotations

from collections.abc import Callable

from drawb.cluster.protocol import ClusterError
from drawb.cluster.pod_account import DEFAULT, pod_service_account


def default_account(namespace: str) -> dict:
    """The ServiceAccount the serviceaccount controller makes in ``namespace``."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT, "namespace": namespace}}


def admit_pod(pod: dict, exists: Callable[[str], bool], shown_name: str | None = None) -> None:
    """Write the account ``pod`` runs as into its spec (in place), or raise the admission plugin's refusal when
    ``exists(account)`` says there is none in the pod's namespace. ``shown_name``: the name the refusal quotes
    (a controller's pod is created from its ``generateName``, which the real refusal quotes)."""
    account = pod_service_account(pod)
    meta = pod["metadata"]
    if not exists(account):
        namespace = meta.get("namespace") or "default"
        raise ClusterError(
            f'pods "{shown_name or meta.get("name", "")}" is forbidden: error looking up service account '
            f'{namespace}/{account}: serviceaccount "{account}" not found', status=403, reason="Forbidden",
            hint=f"apply a ServiceAccount named {account!r} in namespace {namespace!r} before the pod, or name an "
                 "existing one in spec.serviceAccountName")
    spec = pod.setdefault("spec", {})
    spec["serviceAccountName"] = spec["serviceAccount"] = account


def template_account(workload_spec: dict) -> str:
    """The account the pods of a workload's template (``spec.template``) run as."""
    return pod_service_account((workload_spec or {}).get("template") or {})
