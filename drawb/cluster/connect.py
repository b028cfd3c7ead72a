"""Choose and open a cluster: the simulated one by default, a real one through a kubeconfig,
or a snapshot of a real one replayed in the simulated cluster."""

from __future__ import annotations

from drawb.cluster.protocol import WatchableCluster
from drawb.errors import UsageError


def connect(
    *, kubeconfig: str | None = None, context: str | None = None, scenario: str | None = None,
    snapshot: str | None = None,
) -> WatchableCluster:
    """A real cluster when a kubeconfig or context is named, the replayed ``snapshot`` file when one is
    named, else the simulated ``scenario``."""
    if snapshot and (kubeconfig or context):
        raise UsageError("--snapshot replays a saved cluster offline; it cannot go with --kubeconfig or --context",
                         hint="name either a snapshot file or a real cluster")
    if kubeconfig or context:
        from drawb.cluster.kube import KubeCluster

        cluster = KubeCluster(kubeconfig=kubeconfig, context=context)
        cluster.server_version()  # fail now, with a clear message, if the server is unreachable
        return cluster
    if snapshot:
        from drawb.snapshot.replay import replay

        return replay(snapshot)
    from drawb.cluster.sim.cluster import SimCluster

    return SimCluster(scenario or "default")
