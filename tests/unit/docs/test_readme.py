"""The README is a landing page: short, its table of commands is drawb's command table, its links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import drawb.notebook.magics  # noqa: F401  (registers the notebook's own subcommands)
from drawb.commands.registry import load_commands

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"


def first_sentence(text: str) -> str:
    """``text`` up to the end of its first sentence."""
    return re.split(r"(?<=[a-z0-9)`'\"][.?])\s+(?=[A-Z])", text)[0]


def test_readme_is_at_most_250_lines():
    assert len(README.read_text().splitlines()) <= 250


def test_readme_lists_every_subcommand_with_its_help():
    notebook, cli = load_commands("%dra"), load_commands("drawb")
    expected = [f"| `{name}` | {'both' if name in cli else 'notebook'} | {first_sentence(notebook[name].help)} |"
                for name in sorted(notebook)]
    assert set(cli) <= set(notebook)
    rows = [line for line in README.read_text().splitlines() if re.match(r"\| `[a-z-]+` \|", line)]
    assert rows == expected, "README's table of commands should read:\n" + "\n".join(expected)


def test_readme_links_resolve():
    text = README.read_text()
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)]+)\)", text) if not re.match(r"https?:", t)]
    assert targets
    missing = [t for t in targets if t and not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"
