"""A real cluster through the official ``kubernetes`` client, with objects kept as JSON dicts."""

from drawb.cluster.kube.cluster import KubeCluster

__all__ = ["KubeCluster"]
