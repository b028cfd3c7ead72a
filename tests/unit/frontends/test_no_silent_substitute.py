"""Never a silent substitute: a failed connect leaves no simulated answer, and simulated answers say so."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

DRAWB = Path(sys.executable).with_name("drawb")
SOURCE = "[from the simulated cluster 'default' (Kubernetes 1.34 rules), not a real cluster]"


def drawb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def closed_port_kubeconfig(tmp_path) -> tuple[Path, str]:
    """A kubeconfig whose server is a loopback port nothing listens on, and that server's URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = f"https://127.0.0.1:{port}"
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: '{server}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    return path, server


def test_failed_connect_leaves_the_notebook_disconnected(shell, closed_port_kubeconfig):
    kubeconfig, server = closed_port_kubeconfig
    err = shell.fails(f"%dra connect --kubeconfig {kubeconfig}")
    assert err.startswith(f"ConnectionRefused: nothing listens at {server}")
    for command in ("%dra devices", "%dra classes", "%dra pods", "%dra select device.driver == 'gpu.nvidia.com'"):
        err = shell.fails(command)
        first, hint = err.splitlines()
        assert first.startswith(f"NotConnected: not connected: the last connect to {server} failed: nothing listens at")
        assert "`%dra connect --simulated`" in hint
    magics = shell.ipython.magics_manager.registry["DRAMagics"]
    assert magics.session.connected is None  # nothing simulated was opened behind the user's back
    assert "simulated cluster 'default'" in repr(shell.run("%dra connect --simulated"))
    assert len(shell.run("%dra devices")) > 0


def test_failed_connect_on_the_command_line_prints_no_simulated_answer(closed_port_kubeconfig):
    kubeconfig, server = closed_port_kubeconfig
    out = drawb("--kubeconfig", str(kubeconfig), "devices")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"ConnectionRefused: nothing listens at {server}")
    assert "simulated" not in out.stderr and "Traceback" not in out.stderr


def test_simulated_and_scenario_reach_the_simulated_cluster_whatever_config_says(shell, closed_port_kubeconfig):
    kubeconfig, _ = closed_port_kubeconfig
    shell.run(f"%config DRAMagics.kubeconfig = {str(kubeconfig)!r}")
    assert shell.fails("%dra devices").startswith("ConnectionRefused: nothing listens at ")
    assert "simulated cluster 'default'" in repr(shell.run("%dra connect --simulated"))
    assert "simulated cluster 'synthetic:2x3'" in repr(shell.run("%dra connect --scenario synthetic:2x3"))
    err = shell.fails(f"%dra connect --simulated --kubeconfig {kubeconfig}")
    assert err.startswith("UsageError: --simulated chooses the simulated cluster")


def test_simulated_results_say_where_they_come_from(shell, capsys):
    shell.run("%dra connect")
    capsys.readouterr()
    frame = shell.run("%dra devices")
    assert frame.attrs["drawb"]["simulated"] is True
    assert frame.attrs["drawb"]["cluster"] == "simulated cluster 'default' (Kubernetes 1.34 rules)"
    assert SOURCE in capsys.readouterr().out
    html = shell.ipython.display_formatter.formatters["text/html"](frame)
    assert html.startswith("<p><i>from the simulated cluster 'default' (Kubernetes 1.34 rules), not a real cluster")
    shell.run("%dra templates")  # reads no cluster: no line
    assert SOURCE not in capsys.readouterr().out


def test_command_line_header_names_the_simulated_cluster():
    out = drawb("classes")
    assert out.returncode == 0 and out.stderr.splitlines()[0] == SOURCE
    assert SOURCE not in out.stdout
    out = drawb("templates")
    assert out.returncode == 0 and SOURCE not in out.stderr


def test_simulated_dry_run_is_not_called_the_api_server(tmp_path):
    out = drawb("render", "single-gpu", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert "accepted by the simulated cluster (Kubernetes 1.34 rules), dry run: 2 object(s)" in out.stderr
    assert "API server" not in out.stdout + out.stderr


BROKEN_KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://x'\n"


def test_malformed_kubeconfig_names_file_line_and_column(shell, tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text(BROKEN_KUBECONFIG)
    err = shell.fails(f"%dra connect --kubeconfig {path}")
    assert err.splitlines()[0].startswith(f"KubeconfigInvalid: the kubeconfig {path}:6:1 is not valid YAML: ")
    out = drawb("--kubeconfig", str(path), "devices")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"KubeconfigInvalid: the kubeconfig {path}:6:1 is not valid YAML: ")
