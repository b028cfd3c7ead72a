"""The progress bar of ``validate`` and ``apply``: drawn on stderr once a run passes 2 s, in a terminal or a
notebook (or when forced), never for short runs or into a pipe; cleared before the result is printed."""

from __future__ import annotations

import io

import pytest

from drawb.cli import main
from drawb.commands import progress
from drawb.commands.progress import ProgressBar, progress_bar
from drawb.errors import UsageError
from drawb.session import Session


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_drawn_before_two_seconds_then_the_bar_is_redrawn_in_place_and_cleared():
    clock, out = Clock(), io.StringIO()
    with ProgressBar("validate", out, clock=clock) as bar:
        bar("checking", 10, 100)
        clock.now += 1.9
        bar("checking", 50, 100)
        assert out.getvalue() == ""
        clock.now += 0.2
        bar("checking", 60, 100)
        bar("checking", 61, 100)  # within 0.1 s of the last drawing: skipped
        clock.now += 0.1
        bar("checking", 100, 100)
    lines = out.getvalue().split("\r")
    assert lines[1] == "validate: checking [##################............] 60/100 2 s"
    assert lines[2] == "validate: checking [##############################] 100/100 2 s"
    assert lines[3].strip() == "" and lines[4] == ""  # cleared, the cursor back at the line's start


def test_a_short_run_prints_nothing():
    out = io.StringIO()
    with ProgressBar("apply", out) as bar:
        bar("dry run", 3, 3)
    assert out.getvalue() == ""


@pytest.mark.parametrize("choice,prog,stream,shown", [
    ("auto", "drawb", io.StringIO(), False),  # stderr piped or redirected
    ("auto", "drawb", Terminal(), True),
    ("auto", "%dra", io.StringIO(), True),  # a notebook cell shows stderr
    ("always", "drawb", io.StringIO(), True),
    ("never", "%dra", Terminal(), False),
])
def test_where_the_bar_is_shown(choice, prog, stream, shown):
    bar = progress_bar(Session(progress_bar=choice, prog=prog), "validate", stream)
    assert isinstance(bar, ProgressBar) == shown


def test_an_unknown_choice_is_a_usage_error():
    with pytest.raises(UsageError, match="progress_bar 'sometimes': expected one of auto, always, never"):
        progress_bar(Session(progress_bar="sometimes"), "validate")


def _claims(count: int) -> str:
    return "---\n".join(
        f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c{i}}}\nspec:\n  devices:\n"
        f"    requests:\n    - name: gpu\n      exactly: {{deviceClassName: gpu.nvidia.com}}\n" for i in range(count))


def test_validate_and_apply_report_each_step(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "_REDRAW", 0.0)
    path = tmp_path / "claims.yaml"
    path.write_text(_claims(5))
    assert main(["--progress-bar", "always", "validate", str(path)]) == 0
    err = capsys.readouterr().err
    for step in (f"reading {path}", "checking", "matching devices"):
        assert f"\rvalidate: {step} [##############################] 5/5 " in err
    assert main(["--progress-bar", "always", "apply", "--dry-run", str(path)]) == 0
    err = capsys.readouterr().err
    assert "\rapply: dry run [##############################] 5/5 " in err and "applying" not in err
    assert main(["validate", str(path)]) == 0  # stderr is no terminal here: no bar
    assert "\r" not in capsys.readouterr().err


def test_the_notebook_shows_it(shell, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    path = tmp_path / "claims.yaml"
    path.write_text(_claims(3))
    shell.run(f"%dra validate --no-cluster {path}")
    assert "\rvalidate: checking [" in capsys.readouterr().err
