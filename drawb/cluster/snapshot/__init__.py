"""Snapshot files: a cluster's DRA state in one file, and its replay offline in the simulated cluster.

``write``/``read`` store one (whole or not at all; ``document`` is the format) and ``replay(path)``
opens it as a simulated cluster. Reading one from a cluster, redacting it or building it from kubectl
output is the snapshot workflow's (``drawb.snapshot``).
"""

from drawb.cluster.snapshot.document import FORMAT_VERSION, Snapshot, read, write
from drawb.cluster.snapshot.errors import (
    NotASnapshot,
    SnapshotError,
    SnapshotFormatVersion,
    SnapshotKubernetesVersion,
    SnapshotNotYamlOrJson,
    SnapshotTruncated,
    SnapshotUnreadable,
)

__all__ = [
    "FORMAT_VERSION",
    "NotASnapshot",
    "Snapshot",
    "SnapshotError",
    "SnapshotFormatVersion",
    "SnapshotKubernetesVersion",
    "SnapshotNotYamlOrJson",
    "SnapshotTruncated",
    "SnapshotUnreadable",
    "read",
    "write",
]
