"""The user's own manifests: YAML files, folders of them, or text, read into documents with their origin.

A file that is not YAML is a finding (file, line, column), not an exception, so the other files are still
checked; ``kind: List`` documents (``kubectl get -o yaml``) are read as their items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from drawb.apirules import Issue
from drawb.render.errors import RenderError

SUFFIXES = (".yaml", ".yml", ".json")
_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_LIBYAML = hasattr(yaml, "CSafeLoader")


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml's parser where installed) that builds plain strings, mappings and lists
    itself, a few times faster than PyYAML's constructor; every other node (numbers, booleans, nulls,
    timestamps, merge keys, unhashable keys) goes to that constructor, so the documents are the same."""

    def construct_document(self, node: yaml.Node) -> object:
        data = self._plain(node)
        self.constructed_objects, self.recursive_objects, self.deep_construct = {}, {}, False
        return data

    def _plain(self, node: yaml.Node) -> object:
        tag = node.tag
        if tag == _STR and isinstance(node, yaml.ScalarNode):
            return node.value
        if tag == _MAP and isinstance(node, yaml.MappingNode) and all(k.tag == _STR for k, _ in node.value):
            return {k.value: self._plain(v) for k, v in node.value}
        if tag == _SEQ and isinstance(node, yaml.SequenceNode):
            return [self._plain(v) for v in node.value]
        return self.construct_object(node, deep=True)
Progress = Callable[[str, int, int], None]  # (step, done, total): told as a long read goes on


class ManifestFileError(RenderError):
    """A manifest path that does not exist, or a folder without manifests."""

    title = "ManifestNotFound"


@dataclass
class Source:
    """One file (or the cell, or stdin): its documents in order, and why any could not be read."""

    name: str
    documents: list[dict] = field(default_factory=list)
    problems: list[Issue] = field(default_factory=list)


def _files(path: str) -> list[Path]:
    target = Path(path).expanduser()
    if target.is_dir():
        files = sorted(p for p in target.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
        if not files:
            raise ManifestFileError(f"folder {path} holds no {', '.join(SUFFIXES)} files",
                                    hint="name a folder of manifests, or the files themselves")
        return files
    if not target.exists():
        raise ManifestFileError(f"no file or folder {path}", hint="check the path (relative to the working directory)")
    return [target]


def parse_text(name: str, text: str, progress: Progress | None = None) -> Source:
    """The documents of multi-document YAML ``text``; a syntax error becomes a problem naming line and column.
    ``progress(step, done, total)`` is told of each document (the total counted from the ``---`` lines)."""
    source = Source(name)
    total = text.count("\n---") + 1
    raw = []
    try:
        for doc in yaml.load_all(text, Loader=_Loader):
            if doc is not None:
                raw.append(doc)
            if progress:
                progress(f"reading {name}", min(len(raw), total), total)
    except yaml.YAMLError as exc:
        if _LIBYAML:  # PyYAML's own parser words the same error more clearly
            try:
                list(yaml.load_all(text, Loader=yaml.SafeLoader))
            except yaml.YAMLError as clearer:
                exc = clearer
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark else name
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        source.problems.append(Issue("error", where, "", f"not valid YAML: {problem}; nothing in this file was checked"))
        return source
    for position, doc in enumerate(raw, 1):
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            raw_items = doc["items"]
        else:
            raw_items = [doc]
        for item in raw_items:
            if isinstance(item, dict):
                source.documents.append(item)
            else:
                source.problems.append(Issue("error", f"{name} document {position}", "",
                                             f"a manifest is a mapping (apiVersion, kind, metadata, ...), "
                                             f"got {type(item).__name__}"))
    return source


def read_sources(paths: list[str], text: str | None = None, text_name: str = "<stdin>",
                 progress: Progress | None = None) -> list[Source]:
    """Every file of ``paths`` (``-`` is ``text``, a folder is its YAML files), read in order."""
    sources = []
    for path in paths:
        if path == "-":
            sources.append(parse_text(text_name, text or "", progress))
            continue
        for file in _files(path):
            try:
                content = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                sources.append(Source(str(file), problems=[Issue("error", str(file), "", f"cannot be read: {exc}")]))
                continue
            sources.append(parse_text(str(file), content, progress))
    if not paths and text is not None:
        sources.append(parse_text(text_name, text, progress))
    return sources
