"""One finding about a manifest, and how manifests are named in findings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Issue:
    """One finding about a manifest."""

    level: str  # "error" or "warning"
    document: str  # "Kind/name"
    path: str  # dotted path inside the document, "" for the whole document
    message: str
    refused_by_server: bool = False  # an error the API server refuses the object for (not only drawb's advice)

    def __str__(self) -> str:
        where = f"{self.document} {self.path}".strip() if self.path else self.document
        return f"{where}: {self.message}"


def label(doc: Mapping[str, Any]) -> str:
    """``Kind/name`` of a manifest."""
    return f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name', '?')}"
