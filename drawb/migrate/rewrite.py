"""Rewrite manifests: only the lines that change are touched.

A file is split into its YAML documents; a document without legacy requests is kept as its exact
text, and a document with them is edited as text (``drawb.migrate.edits``: legacy limits out,
``resources.claims`` and ``spec.resourceClaims`` in, every other line byte for byte). The
ResourceClaimTemplates, written in the document's indentation, go in front of the workload that
names them.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from drawb.migrate.claims import Plan, claim_template, plan_claims
from drawb.migrate.edits import rewrite_text
from drawb.migrate.errors import ManifestNotYaml
from drawb.migrate.legacy import Workload, find_legacy

_MARKER = re.compile(r"^---(\s|$)")
_KEY_LINE = re.compile(r"^(\s*)((?:-\s+)*)([^\s#-][^:#]*):\s*(#.*)?$")


@dataclass
class Document:
    """One YAML document of a file: its text, where it starts, and what migrate made of it."""

    text: str
    first_line: int  # 0-based line of the document in its file
    workload: Workload | None = None
    plan: Plan | None = None
    templates: list[dict] = field(default_factory=list)
    new_text: str | None = None  # the rewritten text (templates first), None when unchanged
    parsed: object = None  # the rewritten round-trip document

    @property
    def changed(self) -> bool:
        """Whether migrate rewrote this document."""
        return self.new_text is not None


def split_documents(text: str) -> list[tuple[str, int]]:
    """``text`` cut before each ``---`` line: (document text with its marker, first line)."""
    chunks: list[tuple[str, int]] = []
    start, lines = 0, text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if _MARKER.match(line) and number > start:
            chunks.append(("".join(lines[start:number]), start))
            start = number
    if start < len(lines) or not chunks:
        chunks.append(("".join(lines[start:]), start))
    return chunks


def guess_indent(text: str) -> tuple[int, int]:
    """(mapping indent, dash offset of sequences) the text was written with; (2, 0) where it cannot tell."""
    mapping = offset = None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for previous, current in zip(lines, lines[1:]):
        match = _KEY_LINE.match(previous)
        if not match:
            continue
        key_indent = len(match.group(1)) + len(match.group(2))
        indent = len(current) - len(current.lstrip())
        if current.lstrip().startswith("- "):
            offset = indent - key_indent if offset is None else offset
        elif indent > key_indent and mapping is None:
            mapping = indent - key_indent
        if mapping is not None and offset is not None:
            break
    return mapping or 2, max(offset or 0, 0)


def _yaml(mapping: int = 2, offset: int = 0) -> YAML:
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.indent(mapping=mapping, sequence=mapping + offset, offset=offset)
    return yaml


def _parse(text: str, source: str, first_line: int):
    try:
        return _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1 + first_line}:{mark.column + 1}" if mark else ""
        problem = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise ManifestNotYaml(f"{source}{line}: not YAML: {problem}") from None
    except YAMLError as exc:
        raise ManifestNotYaml(f"{source}: not YAML: {exc}") from None


def parse_documents(text: str, source: str) -> list[tuple[Document, object]]:
    """Every document of ``text`` with its parsed (round-trip) content; ManifestNotYaml names file and line."""
    return [(Document(chunk, first), _parse(chunk, source, first)) for chunk, first in split_documents(text)]


def _marker_and_body(text: str) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    if lines and _MARKER.match(lines[0]):
        return lines[0], "".join(lines[1:])
    return "", text


def dump(doc: object, mapping: int = 2, offset: int = 0) -> str:
    """One document as YAML with the given indentation."""
    out = io.StringIO()
    _yaml(mapping, offset).dump(doc, out)
    return out.getvalue()


def migrate_document(document: Document, doc: object, source: str) -> Document:
    """Find legacy requests in one document and, if any, fill in its plan, templates and new text."""
    document.parsed = doc
    document.workload = find_legacy(doc, source, document.first_line)
    if document.workload is None or not document.workload.requests:
        return document
    workload = document.workload
    document.plan = plan_claims(workload)
    document.templates = [claim_template(c, workload.namespace) for c in document.plan.claims]
    marker, body = _marker_and_body(document.text)
    mapping, offset = guess_indent(body)
    new_body = rewrite_text(body, _yaml().compose(body), workload, document.plan)
    eol = "\r\n" if "\r\n" in body else "\n"
    templates = "".join(dump(t, mapping, offset) + "---\n" for t in document.templates).replace("\n", eol)
    document.new_text = marker + templates + new_body
    document.parsed = _parse(new_body, source, document.first_line + (1 if marker else 0))
    return document


def plain(doc: object) -> object:
    """A round-trip document as plain dicts, lists and scalars (what the Cluster protocol takes)."""
    if isinstance(doc, Mapping):
        return {str(k): plain(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [plain(v) for v in doc]
    if isinstance(doc, bool) or doc is None:
        return doc
    if isinstance(doc, int):
        return int(doc)
    if isinstance(doc, float):
        return float(doc)
    return str(doc)
