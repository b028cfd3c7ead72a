"""The documentation site's generated pages cover what they claim to, and every notebook is a tutorial in the nav.

(The strict MkDocs build, ``scripts/docs``, checks links, pages and that every notebook executes.)"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from docsite import commands, versions
from drawb import versions as kube_versions
from drawb.commands.registry import load_commands

ROOT = Path(__file__).resolve().parents[3]


def nav_pages(entries) -> list[str]:
    pages = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_notebook_and_page_is_in_the_nav():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # !!python tags left alone
    pages = nav_pages(config["nav"])
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks and sorted(p.removeprefix("tutorials/") for p in pages if p.endswith(".ipynb")) == notebooks
    written = {p for p in pages if not p.endswith(".ipynb")} - {"reference/commands.md", "reference/versions.md",
                                                                 "developer/benchmarks.md"}
    assert all((ROOT / "docs" / p).is_file() for p in written), [p for p in written if not (ROOT / "docs" / p).is_file()]
    on_disk = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk <= written, f"pages missing from mkdocs.yml's nav (the strict build fails): {sorted(on_disk - written)}"


def test_command_reference_names_every_subcommand_and_option():
    page = commands.page()
    for prog in commands.FRONT_ENDS:
        for name, cmd in load_commands(prog).items():
            assert f"\n## {name}\n" in page
            for action in cmd.parser(prog)._actions:
                for flag in action.option_strings:
                    assert flag in page, f"{name}: {flag} missing"
    assert "`--kubeconfig KUBECONFIG`" in page and "`--version`" in page  # drawb's own options


def test_versions_page_has_every_gate_of_every_minor():
    page = versions.page()
    for minor in kube_versions.known():
        rules = kube_versions.rules(minor)
        assert f"\n## Kubernetes {minor}\n" in page and rules.release in page
        section = page.split(f"\n## Kubernetes {minor}\n")[1].split("\n## ")[0]
        rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # after the header
        assert {row.split(" | ")[0].removeprefix("| ") for row in rows} == set(rules.gates)
    assert "| DRAExtendedResource | alpha, off | alpha, off | beta, on | GA, on, locked |" in page
