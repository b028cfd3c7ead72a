"""The result of a migration: per workload, the legacy request, both roads and the recommendation;
the diff (unified, or side by side); the rewritten files and DeviceClasses, to export or apply."""

from __future__ import annotations

import difflib
import html
import os
from dataclasses import dataclass, field
from pathlib import Path

from drawb.atomicfile import write_atomic
from drawb.migrate.errors import ManifestNotFound
from drawb.migrate.rewrite import Document, dump, plain
from drawb.migrate.roads import ClusterFacts, Roads
from drawb.migrate.sources import Source

COLUMNS = ["source", "workload", "legacy request", "claims road", "extended-resource road", "recommended"]


@dataclass
class FileResult:
    """One source and its documents after migration."""

    source: Source
    documents: list[Document]

    @property
    def changed(self) -> bool:
        """Whether any document was rewritten."""
        return any(d.changed for d in self.documents)

    @property
    def new_text(self) -> str:
        """The rewritten file: changed documents replaced, the others as they were."""
        return "".join(d.new_text if d.changed else d.text for d in self.documents)


@dataclass
class Migration:
    """What ``migrate`` found and produced."""

    files: list[FileResult]
    facts: ClusterFacts | None
    roads: dict[tuple[str, int], Roads] = field(default_factory=dict)  # (source name, document index) -> roads
    notes: list[str] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    applied: str | None = None  # "dry run" or "applied"
    server_objects: list[dict] = field(default_factory=list)
    exit_status: int = 0
    view: str = "unified"  # how __str__ shows the diff: unified or side-by-side

    def workloads(self) -> list[tuple[FileResult, int, Document]]:
        """(file, document index, document) of every rewritten document."""
        return [(f, i, d) for f in self.files for i, d in enumerate(f.documents) if d.changed]

    def rows(self) -> list[dict]:
        """One row per rewritten workload."""
        rows = []
        for f, i, d in self.workloads():
            asked = "; ".join(f"{r.device.resource}: {r.count} ({r.role} {r.container}{f' of {r.pod}' if r.pod else ''})"
                              for r in d.workload.requests)
            road = self.roads.get((f.source.name, i))
            rows.append({"source": f.source.name, "workload": d.workload.label, "legacy request": asked,
                         "claims road": road.claims if road else "", "extended-resource road": road.extended if road else "",
                         "recommended": road.recommended if road else ""})
        return rows

    def frame(self):
        """The rows as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=COLUMNS)

    @property
    def warnings(self) -> list[str]:
        """Class conflicts and device-plugin overlap found in the cluster."""
        return list(self.facts.warnings) if self.facts else []

    def mapping_classes(self) -> list[dict]:
        """The DeviceClasses the extended-resource road needs that the cluster lacks (one per name)."""
        found: dict[str, dict] = {}
        for road in self.roads.values():
            for c in road.mapping_classes:
                found.setdefault(c["metadata"]["name"], c)
        return list(found.values())

    def diff(self) -> str:
        """A unified diff of every rewritten file."""
        parts = []
        for f in self.files:
            if f.changed:
                parts += difflib.unified_diff(f.source.text.splitlines(True), f.new_text.splitlines(True),
                                              f.source.name, f"{f.source.name} (migrated)")
        return "".join(p if p.endswith("\n") else p + "\n" for p in parts)

    def side_by_side(self, width: int = 60) -> str:
        """Every rewritten file as two columns, the old lines left and the new right (changed lines marked)."""
        lines = []
        for f in self.files:
            if not f.changed:
                continue
            old, new = f.source.text.splitlines(), f.new_text.splitlines()
            lines.append(f"== {f.source.name}")
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
                left, right = old[i1:i2], new[j1:j2]
                mark = {"equal": " ", "replace": "|", "delete": "<", "insert": ">"}[tag]
                for k in range(max(len(left), len(right))):
                    a = left[k] if k < len(left) else ""
                    b = right[k] if k < len(right) else ""
                    lines.append(f"{_cut(a, width):<{width}} {mark} {_cut(b, width)}".rstrip())
        return "\n".join(lines)

    def rewritten_yaml(self) -> str:
        """Every rewritten file, one after the other (``# source`` lines between)."""
        return "".join(f"# {f.source.name}\n{f.new_text}" for f in self.files if f.changed)

    def classes_yaml(self) -> str:
        """The DeviceClasses of the extended-resource road as YAML (empty when none is needed)."""
        return "---\n".join(dump(c) for c in self.mapping_classes())

    def to_apply(self, namespace: str) -> list[dict]:
        """The templates and rewritten workloads as plain objects, in ``namespace`` where they name none."""
        objects = []
        for _, _, d in self.workloads():
            for obj in [*d.templates, plain(d.parsed)]:
                obj = dict(obj)
                obj["metadata"] = {"namespace": namespace, **(obj.get("metadata") or {})}
                objects.append(obj)
        return objects

    def export(self, folder: str | os.PathLike) -> list[Path]:
        """Write each rewritten file (and ``deviceclasses.yaml``) under ``folder``; refuse to overwrite an input.

        Each file is written to a temporary file and renamed, so none is ever half-written.
        """
        out = Path(folder).expanduser()
        inputs = {f.source.path.resolve() for f in self.files if f.source.path}
        targets = [(out / f.source.relative, f.new_text) for f in self.files if f.changed]
        if self.mapping_classes():
            targets.append((out / "deviceclasses.yaml", self.classes_yaml()))
        for path, _ in targets:
            if path.resolve() in inputs:
                raise ManifestNotFound(f"--out {folder} would overwrite the input {path}",
                                       hint="export to another folder; migrate never changes its inputs")
        written = []
        for path, text in targets:
            write_atomic(path, text)
            written.append(path)
        self.written = written
        return written

    def status(self) -> str:
        """One line: how many workloads were rewritten, against which cluster, and what was applied."""
        count = len(self.workloads())
        files = sum(1 for f in self.files if f.changed)
        line = (f"migrate: {count} workload(s) with nvidia.com/gpu or nvidia.com/mig-* requests in {files} of "
                f"{len(self.files)} source(s)")
        if self.facts:
            line += f"; roads checked against {self.facts.description} ({self.facts.gate_name()})"
        if self.written:
            line += f"; wrote {len(self.written)} file(s)"
        if self.applied:
            line += f"; {self.applied}: {len(self.server_objects)} object(s) accepted by the API server"
        return line

    def __str__(self) -> str:
        parts = [self.status()]
        for row in self.rows():
            parts.append(f"\n{row['source']}  {row['workload']}\n  legacy:    {row['legacy request']}\n"
                         f"  claims:    {row['claims road']}\n  extended:  {row['extended-resource road']}\n"
                         f"  recommend: {row['recommended']}")
        parts += [f"warning: {w}" for w in self.warnings]
        parts += [f"note: {n}" for n in self.notes]
        if self.mapping_classes():
            parts.append("# DeviceClasses for the extended-resource road:\n" + self.classes_yaml().rstrip())
        diff = self.side_by_side() if self.view == "side-by-side" else self.diff()
        if diff:
            parts.append(diff.rstrip())
        return "\n".join(parts)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        table = self.frame().to_html(index=False, escape=True)
        items = "".join(f"<li>warning: {html.escape(w)}</li>" for w in self.warnings)
        items += "".join(f"<li>note: {html.escape(n)}</li>" for n in self.notes)
        diffs = "".join(
            f"<h4>{html.escape(f.source.name)}</h4>"
            + difflib.HtmlDiff(wrapcolumn=80).make_table(f.source.text.splitlines(), f.new_text.splitlines(),
                                                         "legacy", "rewritten", context=True, numlines=3)
            for f in self.files if f.changed)
        return f"<div><b>{html.escape(self.status())}</b>{table}<ul>{items}</ul>{diffs}</div>"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
