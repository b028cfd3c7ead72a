"""Choose and open a cluster: the simulated one by default, a real one through a kubeconfig or the pod's
service account, or a snapshot of a real one replayed in the simulated cluster."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drawb.cluster import service_account
from drawb.cluster.kubeconfig_file import check_kubeconfig_yaml, current_context, kubeconfig_files
from drawb.cluster.protocol import NotConnected, WatchableCluster
from drawb.errors import UsageError

if TYPE_CHECKING:
    from drawb.cluster.kube.rest import Timeouts


def connect(
    *, kubeconfig: str | None = None, context: str | None = None, scenario: str | None = None,
    snapshot: str | None = None, in_cluster: bool = False, use_kubeconfig: bool = False,
    timeouts: Timeouts | None = None, kubernetes_version: str | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> WatchableCluster:
    """The pod's own cluster when ``in_cluster``, a real cluster when a kubeconfig or context is named (or
    ``use_kubeconfig``: the current context of ``$KUBECONFIG`` or ``~/.kube/config``), its requests bounded
    by ``timeouts``; the replayed ``snapshot`` file when one is named, else the simulated ``scenario`` at
    ``kubernetes_version`` with ``feature_gates`` (those two only for the simulated scenario: a real cluster
    and a snapshot have their own).

    A NotConnected error carries ``server``: the API server's URL, or where the settings were read when
    no server was reached.
    """
    if snapshot and (kubeconfig or context or in_cluster):
        raise UsageError("--snapshot replays a saved cluster offline; it cannot go with --kubeconfig, --context or "
                         "--in-cluster", hint="name either a snapshot file or a real cluster")
    if (kubernetes_version or feature_gates is not None) and (snapshot or kubeconfig or context or in_cluster
                                                             or use_kubeconfig):
        raise UsageError("--kubernetes-version and --feature-gates choose what the simulated cluster runs; a "
                         + ("snapshot replays the version and gates it was saved with" if snapshot
                            else "real cluster runs its own"),
                         hint="leave them out, or connect to the simulated cluster (--scenario)")
    if in_cluster and (kubeconfig or context):
        raise UsageError("--in-cluster uses the pod's service account; it cannot go with --kubeconfig or --context",
                         hint="choose one way to reach the cluster")
    if in_cluster or use_kubeconfig or kubeconfig or context:
        from drawb.cluster.kube import KubeCluster

        try:
            if in_cluster:
                cluster = KubeCluster(service_account=service_account.require(), timeouts=timeouts)
            else:
                check_kubeconfig_yaml(kubeconfig)
                cluster = KubeCluster(kubeconfig=kubeconfig, context=context, timeouts=timeouts)
        except NotConnected as exc:
            exc.server = getattr(exc, "server", None) or (
                f"the service account at {service_account.mount_dir()}" if in_cluster
                else kubeconfig or "$KUBECONFIG or ~/.kube/config")
            raise
        try:
            cluster.server_version()  # fail now, with a clear message, if the server is unreachable
        except NotConnected as exc:
            exc.server = cluster.client.configuration.host
            raise
        return cluster
    if snapshot:
        from drawb.cluster.snapshot.replay import replay

        return replay(snapshot)
    from drawb.cluster.sim.cluster import SimCluster

    return SimCluster(scenario or "default", kubernetes_version=kubernetes_version, feature_gates=feature_gates)


@dataclass(frozen=True)
class FoundCluster:
    """A real cluster this machine could connect to, and the connect option that does."""

    what: str
    option: str


def found_clusters(kubeconfig: str | None = None) -> list[FoundCluster]:
    """The real clusters within reach: the pod's mounted service account, the kubeconfig's current context."""
    found = []
    mount = service_account.mounted()
    if mount is not None:
        identity = mount.identity()
        found.append(FoundCluster(f"this pod's service account{' ' + identity if identity else ''} "
                                  f"(API server {mount.server})", "--in-cluster"))
    context = current_context(kubeconfig)
    if context:
        files = ", ".join(str(p) for p in kubeconfig_files(kubeconfig))
        found.append(FoundCluster(f"the kubeconfig's current context {context!r} ({files})",
                                  f"--kubeconfig {kubeconfig}" if kubeconfig else f"--context {context}"))
    return found
