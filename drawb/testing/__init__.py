"""Test support: a local Kubernetes control plane built from source and a fake NVIDIA DRA driver.

``build`` compiles kube-apiserver, kube-scheduler, kube-controller-manager, kubectl, etcd and kwok
from Go modules (``testcluster/``), ``cluster`` runs them on loopback through kwokctl's binary
runtime, and ``fake_driver`` publishes GPU nodes, ResourceSlices and DeviceClasses the way the
NVIDIA driver does and serves ``nvidia-smi -L`` pod logs through kwok.
"""
