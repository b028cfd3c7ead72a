"""The service account a pod runs as, where Kubernetes mounts it: a token (rotated by the kubelet), the
cluster's CA, the pod's namespace, and the API server's address in ``KUBERNETES_SERVICE_HOST``/``_PORT``.

``DRAWB_SERVICEACCOUNT_DIR`` replaces the standard mount directory (tests write a ServiceAccount's
token and CA there). Nothing here talks to a server or imports the Kubernetes client.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path

from drawb.cluster.protocol import NotConnected

MOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
MOUNT_DIR_ENV = "DRAWB_SERVICEACCOUNT_DIR"
HOST_ENV, PORT_ENV = "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"


class NotInCluster(NotConnected):
    """``--in-cluster`` where no service account is mounted, or no API server address is set."""

    hint = ("--in-cluster works inside a pod that mounts its service account (JupyterHub, Kubeflow); elsewhere "
            "connect with --kubeconfig PATH or --context NAME")


@dataclass(frozen=True)
class ServiceAccountMount:
    """A mounted service account directory and the API server address from the environment."""

    directory: Path
    host: str
    port: str

    @property
    def token_path(self) -> Path:
        return self.directory / "token"

    @property
    def ca_path(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def server(self) -> str:
        """The API server's URL (an IPv6 host in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}"

    def namespace(self) -> str:
        """The pod's namespace from the mount (``default`` when the file is missing)."""
        try:
            return (self.directory / "namespace").read_text().strip() or "default"
        except OSError:
            return "default"

    def identity(self) -> str:
        """``namespace/name`` of the service account, read from the token's subject ('' when it is not a JWT)."""
        try:
            payload = self.token_path.read_text().strip().split(".")[1]
            subject = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["sub"]
        except (OSError, IndexError, ValueError, KeyError, TypeError):
            return ""
        parts = str(subject).split(":")
        return "/".join(parts[2:4]) if parts[:2] == ["system", "serviceaccount"] and len(parts) == 4 else ""


def mount_dir() -> Path:
    """The service account directory: ``$DRAWB_SERVICEACCOUNT_DIR``, else Kubernetes' standard mount."""
    return Path(os.environ.get(MOUNT_DIR_ENV) or MOUNT_DIR)


def mounted() -> ServiceAccountMount | None:
    """The pod's service account when a token is mounted and the API server's address is set, else None."""
    directory = mount_dir()
    host, port = os.environ.get(HOST_ENV, ""), os.environ.get(PORT_ENV, "")
    if host and port and (directory / "token").is_file():
        return ServiceAccountMount(directory, host, port)
    return None


def require() -> ServiceAccountMount:
    """The pod's service account; NotInCluster says what is missing (the address, the token, the CA)."""
    directory = mount_dir()
    host, port = os.environ.get(HOST_ENV, ""), os.environ.get(PORT_ENV, "")
    if not host or not port:
        missing = " and ".join(name for name, value in ((HOST_ENV, host), (PORT_ENV, port)) if not value)
        raise NotInCluster(f"not inside a pod: {missing} not set (Kubernetes sets them in every container)")
    for path, what in ((directory / "token", "token"), (directory / "ca.crt", "CA certificate")):
        if not path.is_file():
            raise NotInCluster(
                f"no service account {what} at {path}: the pod runs without its service account mounted",
                hint="set automountServiceAccountToken: true on the pod (or its ServiceAccount), as JupyterHub's "
                     "KubeSpawner and Kubeflow Notebooks do when asked; see docs/jupyterhub.md")
    return ServiceAccountMount(directory, host, port)
