"""The README is a landing page: short, its table of commands is drawb's command table, its links resolve."""

from __future__ import annotations

import re
from pathlib import Path

from docsite import readme
from drawb.commands.registry import load_commands

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"


def test_readme_is_at_most_250_lines():
    assert len(README.read_text().splitlines()) <= 250


def test_readme_lists_every_subcommand_with_its_help():
    assert readme.table_rows(README.read_text()) == readme.rows(), \
        "README's table of commands is not drawb's command table: run `python -m docsite.readme` to rewrite it"


def test_the_rows_name_every_subcommand_once_with_its_front_ends():
    rows = {row.split(" | ")[0].strip("| `"): row.split(" | ")[1] for row in readme.rows()}
    notebook, cli = load_commands("%dra"), load_commands("drawb")
    assert set(rows) == set(notebook) | set(cli) and len(rows) == len(readme.rows())
    assert rows["devices"] == "both" and rows["build"] == "notebook"
    assert readme.first_sentence("Is this cluster ready for DRA? Version and slices. More here.") == \
        "Is this cluster ready for DRA? Version and slices."


def test_readme_links_resolve():
    text = README.read_text()
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)]+)\)", text) if not re.match(r"https?:", t)]
    assert targets
    missing = [t for t in targets if t and not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"
