"""Every notebook of ``notebooks/`` executed afresh, so that each tutorial page shows the outputs of a real run."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
GENERIC_REPR = re.compile(r"(\w+)\((?:children|layout|value)=")  # ipywidgets' own repr of a widget


class NotebookFailed(RuntimeError):
    """A notebook raised in a cell not tagged ``raises-exception``: the site is not built."""


def notebooks(folder: Path) -> list[Path]:
    """The notebooks of ``folder``, by name."""
    return sorted(folder.glob("*.ipynb"))


def fingerprint(*trees: Path) -> str:
    """A digest of every file under ``trees`` (names and bytes): what a notebook's outputs depend on."""
    digest = hashlib.sha256()
    for tree in trees:
        for path in sorted(p for p in tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(tree.parent)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def execute_all(folder: Path, out: Path) -> dict[str, Path]:
    """Execute every notebook of ``folder`` in a fresh kernel of this Python (its own process each, one per
    two cores at once) and write the executed copies into ``out``; the copies by notebook file name.

    Raises NotebookFailed naming each notebook that failed and the end of what it printed.
    """
    out.mkdir(parents=True, exist_ok=True)
    found = notebooks(folder)
    with ThreadPoolExecutor(max_workers=max(1, min((os.cpu_count() or 1) // 2, len(found)))) as pool:
        runs = list(pool.map(lambda nb: _execute(nb, out / nb.name), found))
    failed = [f"{nb.name}: exit status {run.returncode}\n{(run.stdout + run.stderr)[-2000:]}"
              for nb, run in zip(found, runs) if run.returncode != 0]
    if failed:
        raise NotebookFailed("notebook(s) failed to execute:\n" + "\n\n".join(failed))
    for nb in found:
        _without_widget_views(out / nb.name)
    return {nb.name: out / nb.name for nb in found}


def _without_widget_views(path: Path) -> None:
    """Replace the widget views of an executed notebook by text: a static page has no kernel to draw a widget.
    A widget with a text form of its own (the check runner's log and verdict) shows that; one with only
    ipywidgets' generic repr (the builders, the browser, the map) shows a line saying what it is."""
    notebook = nbformat.read(str(path), as_version=4)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data") or {}
            if WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                generic = GENERIC_REPR.match(data.get("text/plain", ""))
                if generic or "text/plain" not in data:
                    name = generic.group(1) if generic else "a"
                    data.clear()
                    data["text/plain"] = f"[{name} widget: run this notebook in JupyterLab to use it]"
    nbformat.write(notebook, str(path))


def _execute(notebook: Path, target: Path) -> subprocess.CompletedProcess:
    """``python -m drawb.notebook.headless`` on one notebook (what ``scripts/demo --headless`` runs)."""
    return subprocess.run([sys.executable, "-m", "drawb.notebook.headless", str(notebook), "--out", str(target)],
                          capture_output=True, text=True, timeout=900, cwd=notebook.parent.parent)
