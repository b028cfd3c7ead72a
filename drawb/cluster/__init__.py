"""Cluster access: the Cluster protocol, a real cluster (kube) and the simulated one (sim)."""
