"""The workload controllers of the simulated kube-controller-manager."""
