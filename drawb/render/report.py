"""What ``validate`` found in the user's manifests: findings per file, and the exit status a CI job reads."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from drawb.apirules import Issue

COLUMNS = ["level", "file", "object", "path", "message"]


@dataclass
class Finding:
    """One finding, with the file its document came from."""

    file: str
    issue: Issue

    def __str__(self) -> str:
        document = self.issue.document
        where = document if document.startswith(self.file) else f"{self.file}: {document}"
        path = f" {self.issue.path}" if self.issue.path else ""
        return f"{self.issue.level}: {where}{path}: {self.issue.message}"


@dataclass
class ValidationReport:
    """Every finding about a set of manifests; ``exit_status`` is 1 when any is an error."""

    files: int
    documents: int
    target: str  # what they were checked against, in words
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        """Findings that the API server (or the scheduler) would refuse."""
        return [f for f in self.findings if f.issue.level == "error"]

    @property
    def warnings(self) -> list[Finding]:
        """Findings that do not block apply."""
        return [f for f in self.findings if f.issue.level != "error"]

    @property
    def exit_status(self) -> int:
        """1 when any finding is an error (checks failed), else 0."""
        return 1 if self.errors else 0

    def summary(self) -> str:
        """One line: how many documents, errors and warnings."""
        verdict = "invalid" if self.errors else "valid"
        return (f"{verdict}: {self.documents} document(s) in {self.files} file(s), {len(self.errors)} error(s), "
                f"{len(self.warnings)} warning(s); checked against {self.target}")

    def frame(self):
        """The findings as a DataFrame (level, file, object, path, message)."""
        import pandas as pd

        rows = [(f.issue.level, f.file, f.issue.document, f.issue.path, f.issue.message) for f in self.findings]
        return pd.DataFrame(rows, columns=COLUMNS)

    def __str__(self) -> str:
        return "\n".join([*(str(f) for f in self.findings), self.summary()])

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        items = "".join(f"<li><b>{html.escape(f.issue.level)}</b>: {html.escape(str(f).split(': ', 1)[1])}</li>"
                        for f in self.findings)
        return f"<div><p>{html.escape(self.summary())}</p>" + (f"<ul>{items}</ul>" if items else "") + "</div>"
