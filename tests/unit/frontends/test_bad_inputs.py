"""Every bad input gets a named one-line error with a fix, never a traceback, on both front ends;
the CLI's exit status says so (0 success, 1 checks failed, 2 usage or input errors)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from drawb.cli import main

DRAWB = Path(sys.executable).with_name("drawb")


def cli(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return status, out.out, out.err


def test_out_to_a_missing_folder_or_a_folder(shell, capsys, tmp_path):
    err = shell.fails(f"%dra render single-gpu --out {tmp_path / 'nope' / 'x.yaml'}")
    assert err.splitlines() == [f"OutputPathError: --out {tmp_path / 'nope' / 'x.yaml'}: the folder {tmp_path / 'nope'} "
                                "does not exist", f"Hint: create it first (mkdir -p {tmp_path / 'nope'}), or name a file "
                                "in an existing folder"]
    capsys.readouterr()
    status, out, err = cli(capsys, "render", "single-gpu", "--out", str(tmp_path))
    assert status == 2 and out == "" and err.startswith(f"OutputPathError: --out {tmp_path} is a folder")
    assert f"Hint: name a file in it, e.g. {tmp_path / 'single-gpu.yaml'}" in err


def test_unbounded_synthetic_sizes_are_refused_before_building(shell, capsys):
    err = shell.fails("%dra connect --scenario synthetic:1000000x1000")
    assert err.startswith("ScenarioError: synthetic:1000000x1000 is too large: drawb builds at most 20,000 nodes, "
                          "512 devices per node and 200,000 devices in all")
    status, out, err = cli(capsys, "--scenario", "synthetic:20000x64", "devices")
    assert status == 2 and err.startswith("ScenarioError: synthetic:20000x64 is too large")
    assert "Hint: e.g. synthetic:10000x10" in err


BROKEN_TEMPLATE = "{#- drawb\nabout: [not, one, line\n-#}\nkind: Pod\n"
GOOD_TEMPLATE = "{#- drawb\nabout: A note.\nparams: []\n-#}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: note\n"


@pytest.fixture
def template_dir(tmp_path):
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "broken.yaml.j2").write_text(BROKEN_TEMPLATE)
    (folder / "note.yaml.j2").write_text(GOOD_TEMPLATE)
    return folder


def test_a_broken_template_file_is_listed_and_the_others_stay_usable(shell, capsys, template_dir):
    shell.run(f"%config DRAMagics.template_dir = {str(template_dir)!r}")
    frame = shell.run("%dra templates")
    assert "note" in set(frame["template"]) and "single-gpu" in set(frame["template"])
    assert "broken" not in set(frame["template"])
    assert "BrokenTemplate: 1 file(s) of the template folder skipped" in capsys.readouterr().err
    assert shell.fails("%dra render broken").startswith(f"BrokenTemplate: {template_dir / 'broken.yaml.j2'}: ")
    status, out, err = cli(capsys, "--template-dir", str(template_dir), "templates")
    assert status == 0 and " note " in out and f"  - {template_dir / 'broken.yaml.j2'}: " in err
    status, out, err = cli(capsys, "--template-dir", str(template_dir), "render", "broken")
    assert status == 2 and err.startswith("BrokenTemplate: ")


def test_select_compile_error_is_on_stderr_with_exit_2(shell, capsys):
    status, out, err = cli(capsys, "select", 'device.attributes["gpu.nvidia.com"].productName = "x"')
    assert status == 2 and out == ""
    assert err.startswith("CELCompileError: compilation failed: ERROR: <input>:1:49: Syntax error")
    result = shell.run('%dra select device.attributes["gpu.nvidia.com"].productName = "x"')
    assert result.compile_error is not None and "Syntax error" in repr(result)


def test_the_line_form_of_select_keeps_the_expressions_quotes(shell):
    result = shell.run('%dra select device.attributes["gpu.nvidia.com"].productName == "NVIDIA L4"')
    assert result.compile_error is None and result.match_count == 4
    result = shell.run("%dra select --class gpu.nvidia.com device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'")
    assert result.match_count == 4 and result.error_count == 0


def test_network_errors_name_the_url_and_what_to_check(shell, capsys, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n")
    for err in (shell.fails(f"%dra connect --kubeconfig {kubeconfig}"),
                cli(capsys, "--kubeconfig", str(kubeconfig), "classes")[2]):
        first, hint = err.strip().splitlines()
        assert first.startswith(f"ConnectionRefused: nothing listens at https://127.0.0.1:{port}: the connection was refused")
        assert hint.startswith("Hint: check that the API server runs there")


@pytest.mark.parametrize("args", [
    ("--scenario", "nope", "devices"),
    ("render", "nope"),
    ("validate",),
    ("templates", "nope"),
    ("devices", "--class", "nope"),
    ("connect", "--kubeconfig", "/nonexistent/kubeconfig"),
])
def test_command_line_messages_use_command_line_wording(capsys, args):
    status, out, err = cli(capsys, *args)
    assert status == 2 and "%dra" not in err and "%%dra" not in err, err


def test_command_line_help_has_no_notebook_cell_lines():
    out = subprocess.run([str(DRAWB), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "%%dra" not in out.stdout


def test_combined_filters_say_what_is_missing_where(shell, capsys):
    err = shell.fails("%dra devices --type mig --node a100-sxm-node-01")
    assert err.splitlines() == ["UsageError: no device on node 'a100-sxm-node-01' has type 'mig'",
                                "Hint: types of the devices on node 'a100-sxm-node-01': channel, daemon, gpu"]
    status, _, err = cli(capsys, "devices", "--node", "a100-sxm-node-01", "--driver", "gpu.nvidia.com", "--type", "mig")
    assert status == 2
    assert err.startswith("UsageError: no device on node 'a100-sxm-node-01' of driver 'gpu.nvidia.com' has type 'mig'")


def test_attrs_values_are_plain_python_and_missing_is_na(shell, capsys):
    frame = shell.run("%dra attrs")
    ids = frame.set_index("name").loc["compute-domain.nvidia.com/id", "values"]
    assert ids == {0: 8} and type(next(iter(ids))) is int
    status, out, _ = cli(capsys, "attrs")
    assert status == 0 and "np." not in out and "{0: 8}" in out
    devices = shell.run("%dra devices")
    assert all(str(devices[c].dtype) == "string" for c in ("type", "product", "memory", "profile"))
    status, out, _ = cli(capsys, "devices")
    assert status == 0 and "nan" not in out.lower().replace("<na>", "")


def test_command_line_prints_render_warnings_and_dry_run_status_on_stderr(capsys):
    status, out, err = cli(capsys, "render", "extended-resource", "--dry-run")
    assert status == 0, err
    assert "accepted by the simulated cluster (Kubernetes 1.34 rules), dry run" in err
    assert "warning: DeviceClass/" in err and "extendedResourceName" in err
    assert all(d["kind"] for d in yaml.safe_load_all(out))  # stdout: the YAML alone
