"""Snapshots: a cluster's DRA state in one file, shared and replayed offline in the simulated cluster.

``capture(cluster)`` reads it, ``redact(snapshot)`` renames nodes, UUIDs and PCI ids consistently,
``from_files(paths)`` builds one from kubectl output, ``write``/``read`` store it (whole or not at
all), and ``replay(path)`` opens it as a simulated cluster.
"""

from drawb.snapshot.document import FORMAT_VERSION, Snapshot, read, write
from drawb.snapshot.errors import (
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
