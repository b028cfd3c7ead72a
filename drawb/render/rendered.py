"""The result of rendering: validated documents that can be shown, exported, and applied."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drawb import versions
from drawb.apirules import Issue
from drawb.render.errors import RenderError


class OutputPathError(RenderError):
    """An --out path drawb cannot write: a folder, a missing folder, no permission."""
from drawb.render.export import dump_documents, dump_export


def answered_by(cluster: Any) -> str:
    """Who answers an apply through ``cluster``: ``the API server``, or the simulated cluster with its rules."""
    if not getattr(cluster, "simulated", False):
        return "the API server"
    return f"the simulated cluster (Kubernetes {versions.rules_minor(str(cluster.server_version()))} rules)"


def unchecked_note(objects: list[dict]) -> str:
    """``; N of them not checked yet ...`` for a dry run that left some unchecked (a cluster's dry run says which,
    in ``unchecked``: ``drawb.cluster.protocol.DryRunObjects``), else nothing."""
    unchecked = getattr(objects, "unchecked", ())
    if not unchecked:
        return ""
    return (f"; {len(unchecked)} of them not checked yet (in a Namespace, or running as a ServiceAccount, that "
            "this apply creates: the server checks them when they are applied)")


@dataclass
class Rendered:
    """Validated manifests rendered from one template with one set of values."""

    template: str
    values: dict[str, Any]
    documents: list[dict]
    kubernetes_version: str
    namespace: str | None = None
    issues: list[Issue] = field(default_factory=list)
    revalidate: Any = None  # callable(cluster) -> None raising ManifestInvalid; set by render()
    applied: str | None = None  # "dry run" or "applied" after apply(), with the cluster's answer in server_objects
    server_objects: list[dict] = field(default_factory=list)
    answered_by: str = "the API server"  # who accepted the dry run or the apply, in words

    @property
    def warnings(self) -> list[Issue]:
        """Findings that do not block export or apply."""
        return [i for i in self.issues if i.level == "warning"]

    @property
    def yaml(self) -> str:
        """The documents as multi-document YAML with a stable key order."""
        return dump_documents(self.documents)

    def export(self, path: str | Path) -> Path:
        """Write the documents to ``path`` (with the template and values as comments); return the path."""
        out = Path(path).expanduser()
        if out.is_dir():
            raise OutputPathError(f"--out {path} is a folder",
                                  hint=f"name a file in it, e.g. {out / (self.template + '.yaml')}")
        if not out.parent.is_dir():
            raise OutputPathError(f"--out {path}: the folder {out.parent} does not exist",
                                  hint=f"create it first (mkdir -p {out.parent}), or name a file in an existing folder")
        try:
            out.write_text(dump_export(self.template, self.values, self.documents, self.namespace), encoding="utf-8")
        except OSError as exc:
            raise OutputPathError(f"--out {path}: cannot write it: {exc.strerror or exc}",
                                  hint="check the folder's permissions, or name another file") from None
        return out

    def apply(self, cluster: Any, dry_run: bool = True) -> list[dict]:
        """Apply through ``cluster`` (server-side apply; the cluster dry-runs everything first); for real only
        with dry_run=False."""
        if self.revalidate is not None:
            self.revalidate(cluster)
        result = cluster.apply(self.documents, dry_run=dry_run)
        self.applied, self.server_objects = ("dry run" if dry_run else "applied"), result
        self.answered_by = answered_by(cluster)
        return result

    def status(self) -> str:
        """One line: what was rendered, and what the cluster made of it."""
        line = f"{self.template}: " + ", ".join(self.summary())
        if self.applied == "dry run":
            line += (f" (accepted by {self.answered_by}, dry run: {len(self.server_objects)} object(s)"
                     f"{unchecked_note(self.server_objects)})")
        elif self.applied == "applied":
            line += f" (applied: {len(self.server_objects)} object(s), accepted by {self.answered_by})"
        return line

    def terminal_notes(self) -> list[str]:
        """What a terminal shows on stderr beside the YAML: the status line, then each warning."""
        return [self.status()] + [f"warning: {w}" for w in self.warnings]

    def summary(self) -> list[str]:
        """``Kind/name`` of each document."""
        return [f"{d.get('kind')}/{(d.get('metadata') or {}).get('name', '?')}" for d in self.documents]

    def _repr_markdown_(self) -> str:
        lines = [self.status()]
        lines += [f"- warning: {w}" for w in self.warnings]
        return "\n".join(lines) + f"\n\n```yaml\n{self.yaml}```\n"

    def _repr_html_(self) -> str:
        head = html.escape(self.status())
        warns = "".join(f"<li>warning: {html.escape(str(w))}</li>" for w in self.warnings)
        warn_block = f"<ul>{warns}</ul>" if warns else ""
        return f"<div><b>{head}</b>{warn_block}<pre>{html.escape(self.yaml)}</pre></div>"

    def __str__(self) -> str:
        return self.yaml

    def __repr__(self) -> str:
        return f"Rendered({self.template!r}, {', '.join(self.summary())})"
