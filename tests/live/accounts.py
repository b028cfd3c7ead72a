"""A ServiceAccount's own kubeconfig for live tests: a TokenRequest token beside the local cluster's address."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests import credscan


class Withheld(tuple):
    """A fixture's values whose repr shows only the first ``SHOWN`` of them (pytest prints fixture values, and
    the others lead to a token)."""

    SHOWN = 1

    def __new__(cls, *values):
        return super().__new__(cls, values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(v) for v in self[: self.SHOWN])})"


def service_account(control_plane, namespace: str, name: str) -> None:
    """Create ServiceAccount ``namespace/name``."""
    control_plane.api().create({"apiVersion": "v1", "kind": "ServiceAccount",
                                "metadata": {"name": name, "namespace": namespace}})


def token_kubeconfig(control_plane, namespace: str, name: str, path: Path, *,
                     default_namespace: str | None = None, context: str | None = None) -> tuple[Path, str]:
    """Write, at ``path``, a kubeconfig that acts as ServiceAccount ``namespace/name`` with a one-hour token
    (its context's namespace ``default_namespace`` if given); return the path and the token. Both are
    remembered so that no later test's output may show them."""
    token = control_plane.kubectl("create", "token", name, "-n", namespace, "--duration=1h").stdout.strip()
    credscan.remember(token, f"the TokenRequest token of {namespace}/{name}")
    admin = yaml.safe_load(control_plane.kubeconfig.read_text())
    cluster = dict(admin["clusters"][0]["cluster"])
    if not cluster.get("certificate-authority", "/").startswith("/"):  # relative to the admin kubeconfig
        cluster["certificate-authority"] = str(control_plane.kubeconfig.parent / cluster["certificate-authority"])
    context = context or name
    where = {"cluster": "local", "user": name} | ({"namespace": default_namespace} if default_namespace else {})
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "local", "cluster": cluster}], "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": context, "context": where}]}))
    credscan.remember_kubeconfig(path)
    return path, token
