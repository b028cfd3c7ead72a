"""drawb.versions is the one home of what depends on the Kubernetes minor: no other module compares
minors or writes a version as a literal (the allocator's rules.py turns versions into its flags)."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import drawb

ROOT = Path(drawb.__file__).parent
ALLOWED = {ROOT / "alloc" / "rules.py"}
COMPARISON = re.compile(r"\bminor\s*(==|!=|<=|>=|<|>)\s*\d")
VERSION_LITERAL = re.compile(r"""^[rbfu]*(['"])v?1\.\d+(\.\d+)?\1$""", re.IGNORECASE)


def _modules() -> list[Path]:
    return [p for p in sorted(ROOT.rglob("*.py")) if "versions" not in p.relative_to(ROOT).parts[:1]
            and p not in ALLOWED]


def _code_tokens(path: Path):
    return tokenize.generate_tokens(io.StringIO(path.read_text()).readline)


def test_no_module_outside_versions_compares_minors():
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in _modules()
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if COMPARISON.search(line.split("#")[0])]
    assert found == []


def test_no_module_outside_versions_writes_a_version_literal():
    found = [f"{p.relative_to(ROOT)}:{tok.start[0]}: {tok.string}" for p in _modules() for tok in _code_tokens(p)
             if tok.type == tokenize.STRING and VERSION_LITERAL.match(tok.string)]
    assert found == []


def test_the_guards_find_what_they_guard_against(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('if rules.minor == 36:\n    version = "1.36"\n')
    assert COMPARISON.search(planted.read_text().splitlines()[0])
    assert [t.string for t in _code_tokens(planted) if t.type == tokenize.STRING and VERSION_LITERAL.match(t.string)]
