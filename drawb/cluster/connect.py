"""Choose and open a cluster: the simulated one by default, a real one through a kubeconfig."""

from __future__ import annotations

from drawb.cluster.protocol import WatchableCluster


def connect(
    *, kubeconfig: str | None = None, context: str | None = None, scenario: str | None = None
) -> WatchableCluster:
    """A real cluster when a kubeconfig or context is named, else the simulated ``scenario``."""
    if kubeconfig or context:
        from drawb.cluster.kube import KubeCluster

        cluster = KubeCluster(kubeconfig=kubeconfig, context=context)
        cluster.server_version()  # fail now, with a clear message, if the server is unreachable
        return cluster
    from drawb.cluster.sim.cluster import SimCluster

    return SimCluster(scenario or "default")
