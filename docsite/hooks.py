"""MkDocs hooks (``mkdocs.yml``: ``hooks``): add the generated pages to the site before anything renders.

- ``tutorials/<name>.ipynb`` for every notebook of ``notebooks/``, executed afresh (mkdocs-jupyter renders it);
  a notebook that fails fails the build. ``mkdocs serve`` executes them again only when a notebook or
  drawb's source changed since its last build;
- ``reference/commands.md`` from the command table, ``reference/versions.md`` from ``drawb.versions``;
- ``developer/benchmarks.md``: BENCHMARKS.md as it stands at the repository's root.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

from docsite import commands, tutorials, versions

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("mkdocs.hooks.docsite")
SOURCES = (ROOT / "notebooks", ROOT / "drawb", ROOT / "templates")  # what the notebooks' outputs depend on
_serving = {"on": False, "executed": None, "fingerprint": None}  # MkDocs loads this module once per process


def on_startup(command: str, dirty: bool) -> None:
    _serving["on"] = command == "serve"


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns the notebooks into pages
def on_files(files: Files, config: MkDocsConfig) -> Files:
    generated = ROOT / "build" / "docs-generated"  # a folder of its own: serve watches docs/ for changes
    executed = _executed_notebooks(generated / "tutorials")
    for name in executed:
        # a plain File under its own folder, not File.generated: mkdocs-jupyter reads the notebook by path
        files.append(File(f"tutorials/{name}", str(generated), config.site_dir, config.use_directory_urls))
    files.append(File.generated(config, "reference/commands.md", content=commands.page()))
    files.append(File.generated(config, "reference/versions.md", content=versions.page()))
    files.append(File.generated(config, "developer/benchmarks.md", content=(ROOT / "BENCHMARKS.md").read_text()))
    return files


def _executed_notebooks(out: Path) -> dict[str, Path]:
    """Every notebook executed into ``out``; while serving, the last build's when nothing they depend on changed."""
    fingerprint = tutorials.fingerprint(*SOURCES) if _serving["on"] else None
    if fingerprint is not None and fingerprint == _serving["fingerprint"]:
        log.info("notebooks and drawb unchanged since the last build: its executed notebooks are kept")
        return _serving["executed"]
    started = time.monotonic()
    executed = tutorials.execute_all(ROOT / "notebooks", out)
    log.info("executed %d notebooks in %.1f s", len(executed), time.monotonic() - started)
    _serving.update(executed=executed, fingerprint=fingerprint)
    return executed
