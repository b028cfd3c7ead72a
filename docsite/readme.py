"""README's table of commands, one line each, from drawb's command table: ``python -m docsite.readme``
rewrites it in place (tests/unit/docs checks that it is current)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import drawb.notebook.magics  # noqa: F401  (registers the notebook's own subcommands)
from drawb.commands.registry import load_commands

README = Path(__file__).resolve().parents[1] / "README.md"
ROW = re.compile(r"\| `[a-z-]+` \|")


def first_sentence(text: str) -> str:
    """``text`` up to the end of its first sentence."""
    return re.split(r"(?<=[a-z0-9)`'\"][.?])\s+(?=[A-Z])", text)[0]


def rows() -> list[str]:
    """One row per subcommand of either front end: its name, its front ends, the first sentence of its help."""
    notebook, cli = load_commands("%dra"), load_commands("drawb")
    names = sorted(set(notebook) | set(cli))
    front_ends = {name: "both" if name in notebook and name in cli else ("notebook" if name in notebook else "drawb")
                  for name in names}
    return [f"| `{name}` | {front_ends[name]} | {first_sentence((notebook.get(name) or cli[name]).help)} |"
            for name in names]


def table_rows(text: str) -> list[str]:
    """The rows of the table of commands in README text ``text``."""
    return [line for line in text.splitlines() if ROW.match(line)]


def main() -> int:
    lines = README.read_text().splitlines()
    at = [i for i, line in enumerate(lines) if ROW.match(line)]
    lines[at[0]:at[-1] + 1] = rows()
    README.write_text("\n".join(lines) + "\n")
    print(f"README.md: the table of commands has {len(rows())} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
