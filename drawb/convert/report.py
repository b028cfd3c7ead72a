"""The result of ``convert``: per file the new text and what changed; the diff; the files written with ``--out``."""

from __future__ import annotations

import difflib
import html
import os
from dataclasses import dataclass, field
from pathlib import Path

from drawb.atomicfile import write_atomic
from drawb.convert import facts
from drawb.convert.document import DocumentChange, convert_text
from drawb.convert.errors import ConvertOutputRefused


@dataclass
class ConvertedFile:
    """One input and its converted text."""

    name: str  # shown in the diff and the report: a path, ``<stdin>`` or ``<cell>``
    text: str
    new_text: str
    documents: list[DocumentChange]
    path: Path | None = None  # the input file, for files
    relative: str | None = None  # where it goes under an --out folder

    @property
    def changed(self) -> bool:
        """Whether convert rewrote anything in this file."""
        return self.new_text != self.text


@dataclass
class Conversion:
    """What ``convert`` did to every input."""

    files: list[ConvertedFile]
    target: str
    written: list[Path] = field(default_factory=list)
    exit_status: int = 0

    def converted(self) -> list[DocumentChange]:
        """Every document that was rewritten."""
        return [d for f in self.files for d in f.documents if d.changes]

    def notes(self) -> list[str]:
        """One line per DRA document left as it was, saying why."""
        return [f"{f.name}: {d.label} ({facts.GROUP}/{d.source_version}): {d.note}"
                for f in self.files for d in f.documents if d.note]

    def diff(self) -> str:
        """A unified diff of every rewritten file (``patch -p0`` applies it)."""
        parts: list[str] = []
        for f in self.files:
            if f.changed:
                parts += difflib.unified_diff(f.text.splitlines(True), f.new_text.splitlines(True), f.name, f.name)
        return "".join(p if p.endswith("\n") else p + "\n\\ No newline at end of file\n" for p in parts)

    def status(self) -> str:
        """One line: how many documents were rewritten in how many files, and what was written."""
        count = len(self.converted())
        if not count:
            line = f"convert: nothing to convert to {facts.GROUP}/{self.target} in {len(self.files)} source(s)"
        else:
            changed = sum(1 for f in self.files if f.changed)
            line = (f"convert: {count} document(s) rewritten to {facts.GROUP}/{self.target} in {changed} of "
                    f"{len(self.files)} source(s), as the API server converts them")
        if self.written:
            line += f"; wrote {', '.join(str(p) for p in self.written)}"
        return line

    def terminal_notes(self) -> list[str]:
        """The status line and notes, which a terminal prints on stderr (the diff alone goes to stdout)."""
        return [self.status(), *(f"note: {n}" for n in self.notes())]

    def export(self, out: str | os.PathLike) -> list[Path]:
        """Write the converted files: to ``out`` itself for one input (unless it is a folder), else under the
        folder ``out``; never over an input. Each file is written to a temporary file and renamed."""
        target = Path(out).expanduser()
        if len(self.files) == 1 and not target.is_dir():
            targets = [(target, self.files[0])]
        else:
            if target.exists() and not target.is_dir():
                raise ConvertOutputRefused(f"--out {out} is a file, but there are {len(self.files)} inputs",
                                           hint="give a folder: each converted file is written under it")
            targets = [(target / (f.relative or Path(f.name).name), f) for f in self.files]
        inputs = {f.path.resolve() for f in self.files if f.path}
        for path, _ in targets:
            if path.resolve() in inputs:
                raise ConvertOutputRefused(f"--out {out} would overwrite the input {path}",
                                           hint="write to another file or folder, then move it over the input")
        written = []
        for path, converted in targets:
            write_atomic(path, converted.new_text)
            written.append(path)
        self.written = written
        return written

    def __str__(self) -> str:
        return "" if self.written else self.diff().rstrip("\n")

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text("\n".join([*self.terminal_notes(), str(self)]).rstrip("\n"))

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes())
        diff = self.diff()
        return (f"<div><b>{html.escape(self.status())}</b>" + (f"<ul>{notes}</ul>" if notes else "")
                + (f"<pre>{html.escape(diff)}</pre>" if diff and not self.written else "") + "</div>")


def convert_files(inputs: list[tuple[str, str, Path | None, str | None]], target: str = "v1") -> Conversion:
    """Convert every ``(name, text, path, relative)`` input; raises on the first one that is not YAML."""
    files = []
    for name, text, path, relative in inputs:
        new_text, documents = convert_text(text, name, target)
        files.append(ConvertedFile(name, text, new_text, documents, path, relative))
    return Conversion(files, target)
