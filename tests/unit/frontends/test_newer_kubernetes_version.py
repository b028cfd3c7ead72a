"""A Kubernetes version newer than drawb knows is checked with the newest known rules, and both front
ends say so in one plain line (not Python's warning format, not "does not compile")."""

from __future__ import annotations

from drawb.cli import main

SELECTOR = 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H")'


def test_cli_select_at_a_newer_version_warns_once_and_compiles(capsys):
    assert main(["select", "--kubernetes-version", "v1.38.0-gke.100", SELECTOR]) == 0
    out, err = capsys.readouterr()
    assert err.count("Warning: Kubernetes 1.38 is newer than drawb knows (1.37): checking with 1.37 rules") == 1
    assert "does not compile" not in out + err and "devices match" in out


def test_cli_select_at_an_older_version_is_refused_by_name(capsys):
    assert main(["select", "--kubernetes-version", "1.33", SELECTOR]) == 2
    _, err = capsys.readouterr()
    assert "Kubernetes 1.33 is older than drawb models (1.34 to 1.37)" in err


def test_magic_select_at_a_newer_version_warns_once(shell, capsys):
    shell.run("%dra connect")
    capsys.readouterr()
    shell.run(f"%dra select --kubernetes-version 1.39 {SELECTOR}")
    _, err = capsys.readouterr()
    assert err.count("Warning: Kubernetes 1.39 is newer than drawb knows (1.37): checking with 1.37 rules") == 1
