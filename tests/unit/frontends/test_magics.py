"""%dra through a real IPython shell."""

from __future__ import annotations

import pandas as pd
import pytest

from drawb.errors import UsageError


def test_connect_defaults_to_the_simulated_cluster(shell):
    result = shell.run("%dra connect")
    assert "simulated cluster 'default'" in repr(result)
    assert "v1.34" in repr(result)


def test_unknown_subcommand_is_one_named_line_with_a_hint(shell, capsys):
    err = shell.fails("%dra devicez")
    assert err.splitlines() == ["UsageError: unknown subcommand 'devicez'", "Hint: did you mean `devices`?"]
    assert "Traceback" not in err


def test_unknown_flag_names_the_flag(shell, capsys):
    err = shell.fails("%dra devices --gpu")
    assert "unrecognized arguments: --gpu" in err and "%dra help devices" in err


def test_unknown_scenario_lists_the_known_ones(shell, capsys):
    err = shell.fails("%dra connect --scenario h100-only")
    assert "unknown scenario 'h100-only'" in err and "default" in err


def test_missing_kubeconfig_is_a_clear_error(shell, capsys, tmp_path):
    err = shell.fails(f"%dra connect --kubeconfig {tmp_path / 'nope.yaml'}")
    assert err.startswith(f"KubeconfigUnusable: no kubeconfig at {tmp_path / 'nope.yaml'}")


def test_unreachable_server_is_a_clear_error(shell, capsys, tmp_path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    err = shell.fails(f"%dra connect --kubeconfig {kubeconfig}")
    assert err.startswith("ConnectionRefused: nothing listens at https://127.0.0.1:9")


def test_short_errors_off_raises_with_traceback(shell):
    shell.run("%config DRAMagics.short_errors = False")
    with pytest.raises(UsageError):
        shell.run("%dra devicez")


def test_config_options_reach_the_session(shell):
    shell.run("%config DRAMagics.namespace = 'gpu-team'")
    magics = shell.ipython.magics_manager.registry["DRAMagics"]
    assert magics.session.namespace == "gpu-team"


def test_help_documents_every_subcommand(shell):
    text = shell.run("%dra help")
    for name in ("connect", "devices", "slices", "classes", "claims", "pods", "attrs", "scenarios"):
        assert f"%dra {name}" in text
    doc = shell.ipython.find_line_magic("dra").__doc__
    assert "%dra devices [--node NODE]" in doc and "DRAMagics" not in doc.split("Options")[0]


def test_scenarios_is_a_dataframe(shell):
    frame = shell.run("%dra scenarios")
    assert isinstance(frame, pd.DataFrame) and "default" in set(frame["scenario"])


def test_a_failing_command_fails_its_cell_and_shows_no_traceback(shell, capsys):
    result = shell.ipython.run_cell("%dra devices --node nope\nafter = 1", store_history=False)
    assert not result.success and "after" not in shell.ipython.user_ns  # "Run all" stops here
    shown = capsys.readouterr()
    assert shown.out.startswith("UsageError: no device has node 'nope'\nHint: nodes in this cluster: ")
    assert "Traceback" not in shown.out + shown.err


def test_hints_name_the_front_end_in_use(shell, capsys):
    assert "Hint: `%dra scenarios` lists them" in shell.fails("%dra connect --scenario h100-only")
    from drawb.cli import main

    assert main(["--scenario", "h100-only", "devices"]) == 2
    assert "Hint: `drawb scenarios` lists them" in capsys.readouterr().err


def test_reloading_the_extension_stops_the_old_sessions_watches(shell):
    shell.run("%dra devices")
    old = shell.ipython.magics_manager.registry["DRAMagics"].session
    assert old._cluster is not None and old._live is not None
    shell.run("%reload_ext drawb")
    assert old._cluster is None and old._live is None  # closed: nothing of it keeps watching
    assert shell.ipython.magics_manager.registry["DRAMagics"].session is not old
