"""The check runner widget (``%dra check``) in a real IPython shell on the simulated cluster: its traits
while the check runs, the verdict it keeps, the "Run again" button's twin, and failures."""

from __future__ import annotations

import pytest

from drawb.check import PASS, TIMEOUT, Verdict
from drawb.notebook.checkrunner import RUNNING, CheckRunner
from drawb.notebook.magics import CommandFailed

UUID_LINE = "GPU 0: NVIDIA "


def follow(runner: CheckRunner) -> list[tuple[str, object]]:
    """Record every change of the runner's traits, in order."""
    seen: list[tuple[str, object]] = []
    runner.observe(lambda change: seen.append((change["name"], change["new"])),
                   names=["status", "stages", "log_text", "notes"])
    return seen


def test_magic_returns_a_runner_that_keeps_the_verdict(shell):
    runner = shell.run("%dra check single-gpu")
    assert isinstance(runner, CheckRunner)
    assert isinstance(runner.verdict, Verdict) and runner.verdict.status == PASS and runner.passed
    assert runner.status == PASS and runner.reason == runner.verdict.reason
    names = [stage for _, stage, _ in runner.stages]
    assert names[:2] == ["start", "applied"] and names[-1] == "verdict"
    assert {"claim", "allocated", "reserved", "scheduled", "running", "exited"} <= set(names)
    assert [(at, stage, message) for at, stage, message in runner.stages] == [
        (s.at, s.stage, s.message) for s in runner.verdict.stages]
    [line] = runner.log_text.splitlines()
    assert line.startswith(UUID_LINE) and runner.verdict.expected[0].uuid in line
    assert runner.notes == ["cleaned up " + ", ".join(runner.verdict.cleaned_up)]
    assert runner.source.startswith("[from the simulated cluster") and "not a real cluster" in runner.source


def test_run_again_runs_a_new_check_and_the_traits_follow_it(shell):
    runner = shell.run("%dra check single-gpu")
    first = runner.verdict.run_id
    seen = follow(runner)
    runner._again.click()  # the button; runner.run() is its twin
    verdict = runner.verdict
    assert verdict.run_id != first and verdict.passed and not runner._again.disabled
    assert len(runner.log_text.splitlines()) == 1  # the first run's log is gone
    assert seen[0] == ("status", RUNNING)
    stage_counts = [len(value) for name, value in seen if name == "stages"]
    assert stage_counts[1:] == list(range(1, len(runner.stages) + 1))  # one stage at a time (after the reset)
    order = [name for name, value in seen if value]
    assert order.index("log_text") < order.index("notes") < len(order) - 1
    assert seen[-1] == ("status", PASS)
    log_at = next(i for i, (name, value) in enumerate(seen) if name == "log_text" and value)
    stages_before_log = [s for name, s in seen[:log_at] if name == "stages"][-1]
    assert "verdict" not in [stage for _, stage, _ in stages_before_log]  # the log streams before the verdict


def test_two_containers_log_under_their_names(shell):
    runner = shell.run("%dra check shared-claim")
    lines = runner.log_text.splitlines()
    assert sorted(line.split(" | ")[0] for line in lines) == ["first", "second"]
    assert len({line.split(" | ")[1] for line in lines}) == 1  # both saw the one shared GPU


def test_a_check_that_cannot_schedule_ends_red_with_the_schedulers_reason(shell):
    runner = shell.run("%dra check --selector \"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA B300'\""
                       " --timeout 2")
    assert runner.status == TIMEOUT and not runner.passed
    assert "never scheduled after 2 s" in runner.reason and "cannot allocate all claims" in runner.reason
    assert "<b style='color:#cf222e'>TIMEOUT</b>" in runner._title.value
    assert "pending" in [stage for _, stage, _ in runner.stages]
    assert runner.log_text == ""


def test_bad_input_fails_the_cell_and_leaves_no_widget(shell):
    shown = shell.fails("%dra check no-such-template")
    assert "UsageError: template 'no-such-template'" in shown
    assert "Hint:" in shown


def test_json_still_returns_the_verdict_as_text(shell):
    import json

    text = shell.run("%dra check single-gpu --json")
    assert json.loads(text)["status"] == PASS


def test_a_check_that_raises_leaves_the_runner_without_a_verdict():
    def broken(progress):
        raise KeyboardInterrupt

    runner = CheckRunner(broken, title="interrupted")
    with pytest.raises(KeyboardInterrupt):
        runner.run()
    assert runner.verdict is None and runner.status == "" and not runner._again.disabled


def test_a_failed_cleanup_is_shown_under_the_verdict_and_repeated_notes_are_not():
    from drawb.check.verdict import Stage

    def start(progress):
        progress.stage(Stage(0.0, "start", "checking something"))
        progress.log("cuda-check", "GPU 0: NVIDIA H200 (UUID: GPU-1)")
        progress("cleanup failed: 403; delete the objects labelled drawb/check-run=1")
        progress("cleaned up Pod/p")
        return Verdict(status=PASS, reason="fine", run_id="1", namespace="n", pod="p", cleaned_up=["Pod/p"])

    runner = CheckRunner(start, title="by hand")
    runner.run()
    assert runner.stages == [(0.0, "start", "checking something")] and runner.log_text.endswith("(UUID: GPU-1)")
    assert runner.notes[0].startswith("cleanup failed: 403")
    assert "<li>cleanup failed: 403" in runner._verdict_box.value and "<li>cleaned up" not in runner._verdict_box.value
