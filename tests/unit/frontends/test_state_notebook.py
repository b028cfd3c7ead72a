"""The notebook saves and loads the simulated cluster, to a file of its own or to the state the command
line keeps (each ``drawb`` command its own process): a real IPython shell with drawb loaded."""

from __future__ import annotations

from tests.unit.frontends.test_kept_state import ok, phase, pod_file


def pods(shell) -> set[str]:
    return set(shell.run("%dra pods")["pod"])


def test_save_then_load_a_file_brings_the_cluster_back(shell, tmp_path):
    shell.run("%dra connect")
    shell.run(f"%dra apply {pod_file(tmp_path, 'kept', seconds=3600)}")
    saved = shell.run(f"%dra state save {tmp_path / 'nb.state'}")
    assert "Saved simulated cluster 'default'" in repr(saved) and "%dra state load" in repr(saved)
    shell.run("%dra connect --reset")
    assert "kept" not in pods(shell)
    loaded = shell.run(f"%dra state load {tmp_path / 'nb.state'}")
    assert "Loaded simulated cluster 'default'" in repr(loaded)
    assert "kept" in pods(shell)
    claims = shell.run("%dra claims")
    assert any(name.startswith("kept-gpu-") for name in claims["name"])


def test_the_notebook_and_the_command_line_share_the_kept_state(shell, tmp_path):
    shell.run("%dra connect")
    shell.run(f"%dra apply {pod_file(tmp_path, 'from-notebook', seconds=3600)}")
    shell.run("%dra state save")  # the state the command line keeps for this scenario
    assert phase(ok("pods"), "from-notebook") is not None
    ok("apply", pod_file(tmp_path, "from-shell", seconds=3600))
    shell.run("%dra state load")
    assert {"from-notebook", "from-shell"} <= pods(shell)


def test_load_without_a_kept_state_says_so(shell):
    shell.run("%dra connect")
    message = shell.fails("%dra state load")
    assert "no simulated cluster is kept in" in message and "%dra state save" in message
    assert "trainer" in pods(shell)  # still connected to the cluster it had
