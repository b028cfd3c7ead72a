"""What importing drawb costs: the allocator and ``why`` need no pandas. (What the wheel carries: tests/package.)"""

from __future__ import annotations

import subprocess
import sys


def test_the_allocator_and_why_import_no_pandas():
    """Allocating, explaining and previewing need no DataFrame until a table is made: ``drawb why`` and
    a script calling ``drawb.alloc.allocate`` do not pay for importing pandas."""
    code = ("import sys; import drawb.alloc, drawb.explain, drawb.plan, drawb.commands.why, drawb.cel, drawb.inventory; "
            "print(sorted(m for m in ('pandas', 'numpy', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
