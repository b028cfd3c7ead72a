"""The public corpus (tests/data/public-corpus): manifests others published, kept byte for byte (SOURCES.md
names each file's repository, path, commit and licence), read as single documents.

A document is judged on its own, as ``kubectl apply --server-side --dry-run=server`` judges each document of
a file: the API server's verdict on one document does not depend on the others. What the files assume exists
(their namespaces; a document without one goes to ``default``) is created before the run, never edited in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

PUBLIC_CORPUS = Path(__file__).resolve().parents[1] / "data" / "public-corpus"
SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Document:
    """One document of a corpus file."""

    file: str  # relative to PUBLIC_CORPUS
    index: int  # from 1, in its file
    body: dict

    @property
    def id(self) -> str:
        """``file#index``."""
        return f"{self.file}#{self.index}"

    @property
    def namespace(self) -> str | None:
        """The namespace the document names, if any."""
        return (self.body.get("metadata") or {}).get("namespace")


def corpus_files() -> list[Path]:
    """Every manifest file of the corpus, in path order."""
    return sorted(p for p in PUBLIC_CORPUS.rglob("*") if p.suffix in SUFFIXES)


def load_documents() -> list[Document]:
    """Every document of every corpus file, in order (empty documents, such as a leading ``---``, left out)."""
    documents = []
    for path in corpus_files():
        bodies = [d for d in yaml.safe_load_all(path.read_text()) if d]
        documents += [Document(str(path.relative_to(PUBLIC_CORPUS)), i, body) for i, body in enumerate(bodies, 1)]
    return documents


def namespaces_named(documents: list[Document]) -> list[str]:
    """The namespaces the documents live in (``default`` for those that name none), sorted."""
    return sorted({d.namespace or "default" for d in documents} | {"default"})
