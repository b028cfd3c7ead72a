"""The wheel carries the data drawb needs at run time: templates, simulated scenarios, the RBAC manifest."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_ships_templates_and_scenarios(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, timeout=600,
    )
    [wheel] = tmp_path.glob("drawb-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {p.name for p in (ROOT / "templates").glob("*.yaml.j2")}
    assert templates and {f"drawb/render/templates/{t}" for t in templates} <= names
    assert "drawb/cluster/sim/scenarios/default.yaml" in names
    assert "drawb/access/rbac.py" in names  # the RBAC manifest `drawb rbac` prints
    assert any(n.endswith("entry_points.txt") for n in names)


def test_the_allocator_and_why_import_no_pandas():
    """Allocating, explaining and previewing need no DataFrame until a table is made: ``drawb why`` and
    a script calling ``drawb.alloc.allocate`` do not pay for importing pandas."""
    code = ("import sys; import drawb.alloc, drawb.explain, drawb.plan, drawb.commands.why, drawb.cel, drawb.inventory; "
            "print(sorted(m for m in ('pandas', 'numpy', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
