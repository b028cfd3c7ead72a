"""``%load_ext drawb`` stays light: heavy modules load on first use, not with the extension."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ["pandas", "drawb.cel", "drawb.render", "drawb.inventory", "kubernetes", "jsonschema", "cel_expr_python"]

PROBE = f"""
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "drawb")
assert "dra" in shell.magics_manager.magics["line"]
print(",".join(m for m in {HEAVY!r} if m in sys.modules))
"""


def test_load_ext_imports_no_heavy_module():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == ""
