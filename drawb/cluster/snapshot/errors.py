"""The errors of reading, writing and replaying snapshot files."""

from __future__ import annotations

from drawb.errors import PROG, DrawbError


class SnapshotError(DrawbError):
    """A snapshot file drawb cannot use."""


class SnapshotUnreadable(SnapshotError):
    """The file cannot be opened, or the snapshot cannot be written where asked."""


class SnapshotNotYamlOrJson(SnapshotError):
    """The file is neither YAML nor JSON."""

    hint = f"name a file written by `{PROG} snapshot save` or `{PROG} snapshot from-files`"


class SnapshotTruncated(SnapshotError):
    """The file ends before the snapshot does (cut short while copied or downloaded)."""

    hint = "copy the file again from where it was saved; drawb itself never leaves a half-written snapshot"


class NotASnapshot(SnapshotError):
    """YAML or JSON, but not a drawb snapshot (another kind of document)."""

    hint = (f"`{PROG} snapshot save FILE` writes one; for `kubectl get ... -o yaml` output use "
            f"`{PROG} snapshot from-files FILE...`")


class SnapshotFormatVersion(SnapshotError):
    """A snapshot of a format version this drawb does not read."""


class SnapshotKubernetesVersion(SnapshotError):
    """A snapshot of a Kubernetes version the simulated cluster cannot replay."""
