"""The one parser for Kubernetes version strings (``v1.36.3``, ``1.36``, ``v1.36.3-gke.1200``, ``v1.37.2+k3s1``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from drawb.errors import DrawbError

_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?([-+][0-9A-Za-z.+-]*)?\s*$")


class NotAKubernetesVersion(DrawbError, ValueError):
    """A string that is not a Kubernetes version."""

    hint = "write a version like 1.36 or v1.36.3 (a vendor suffix such as -gke.1200 or +k3s1 is fine)"


@dataclass(frozen=True, order=True)
class Version:
    """A Kubernetes release as a server reports it; ``suffix`` keeps a vendor's ``-gke.1200`` or ``+k3s1``."""

    major: int
    minor: int
    patch: int | None = None
    suffix: str = ""

    @property
    def minor_text(self) -> str:
        """``"1.36"``: the minor whose rules apply."""
        return f"{self.major}.{self.minor}"

    def __str__(self) -> str:
        patch = "" if self.patch is None else f".{self.patch}"
        return f"v{self.major}.{self.minor}{patch}{self.suffix}"


def parse(text: str) -> Version:
    """Read a version string; NotAKubernetesVersion when it is none."""
    match = _VERSION.match(str(text)) if text is not None else None
    if not match:
        raise NotAKubernetesVersion(f"{text!r} is not a Kubernetes version")
    major, minor, patch, suffix = match.groups()
    return Version(int(major), int(minor), None if patch is None else int(patch), suffix or "")
