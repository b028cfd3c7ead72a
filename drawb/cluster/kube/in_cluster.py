"""The client's Configuration for the pod's own service account: its token, read again when the kubelet
rotates it, and the CA Kubernetes mounts beside it."""

from __future__ import annotations

from kubernetes.client import Configuration

from drawb.cluster.kube.credentials import settle
from drawb.cluster.kube.failures import Origin
from drawb.cluster.kube.token_file import TokenFile
from drawb.cluster.service_account import ServiceAccountMount


def in_cluster_configuration(mount: ServiceAccountMount) -> Configuration:
    """The Configuration that reaches the API server as ``mount``'s service account."""
    configuration = Configuration()
    configuration.host = mount.server
    configuration.ssl_ca_cert = str(mount.ca_path)
    TokenFile(mount.token_path, "the service account token").install(configuration)
    identity = mount.identity()
    configuration.drawb_origin = Origin(
        ca=f"the service account's CA ({mount.ca_path})",
        credentials="the token of service account " + (identity or f"mounted at {mount.directory}"))
    settle(configuration)
    return configuration
