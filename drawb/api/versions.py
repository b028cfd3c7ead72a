"""The Kubernetes version drawb checks against when neither the user nor a cluster names one."""

DEFAULT_KUBERNETES_VERSION = "1.34"
