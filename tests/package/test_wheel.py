"""The package installs anywhere: the sdist and the wheel build (the wheel from the sdist), the wheel carries the
data drawb needs at run time, and installed alone into a fresh virtual environment it runs ``drawb --version``,
``drawb devices`` and ``%load_ext drawb`` there, outside this checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UV = Path(sys.executable).with_name("uv")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def run(*args, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                         env={k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")})
    assert out.returncode == 0, f"{' '.join(map(str, args))} exited {out.returncode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist and the wheel ``uv build`` makes of this checkout (the wheel built from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    run(UV, "build", "--quiet", "--out-dir", out, ROOT, cwd=out)
    return out


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> Path:
    """A fresh virtual environment holding the wheel alone (and its dependencies): its bin folder."""
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    run(UV, "venv", "--quiet", "--python", sys.executable, venv, cwd=dist)
    [wheel] = dist.glob("drawb-*.whl")
    run(UV, "pip", "install", "--quiet", "--python", venv / "bin" / "python", wheel, cwd=dist)
    return venv / "bin"


def test_sdist_and_wheel_build(dist):
    assert {p.name for p in dist.iterdir()} >= {f"drawb-{VERSION}.tar.gz", f"drawb-{VERSION}-py3-none-any.whl"}


def test_wheel_ships_templates_and_scenarios(dist):
    [wheel] = dist.glob("drawb-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {p.name for p in (ROOT / "templates").glob("*.yaml.j2")}
    assert templates and {f"drawb/render/templates/{t}" for t in templates} <= names
    assert "drawb/cluster/sim/scenarios/default.yaml" in names
    assert "drawb/access/rbac.py" in names  # the RBAC manifest `drawb rbac` prints
    assert any(n.endswith("entry_points.txt") for n in names)
    assert not any(n.startswith(("docsite/", "tests/")) for n in names)


def test_installed_wheel_runs_the_command_line(installed, tmp_path):
    assert run(installed / "drawb", "--version", cwd=tmp_path).stdout == f"drawb {VERSION}\n"
    devices = run(installed / "drawb", "devices", cwd=tmp_path)
    assert len(devices.stdout.splitlines()) == 1 + 46  # the default scenario: 38 GPU and MIG devices, 8 others
    assert "[from the simulated cluster 'default'" in devices.stderr


def test_installed_wheel_loads_in_ipython(installed, tmp_path):
    code = ("from IPython.core.interactiveshell import InteractiveShell\n"
            "import drawb\n"
            "shell = InteractiveShell.instance()\n"
            "shell.run_line_magic('load_ext', 'drawb')\n"
            "devices = shell.run_line_magic('dra', 'devices')\n"
            "print('loaded:', drawb.__file__, len(devices))\n")
    out = run(installed / "python", "-c", code, cwd=tmp_path).stdout
    _, where, count = out.splitlines()[-1].split()
    assert Path(where).is_relative_to(installed.parent) and int(count) == 46
