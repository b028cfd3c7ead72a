"""Both front ends choose the simulated cluster's Kubernetes version and feature gates: `drawb connect` and
the global options in a real subprocess, `%dra connect` in a real IPython shell; the stamp beside every
answer names the chosen minor, and bad values are named errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from drawb import versions

ROOT = Path(__file__).parents[3]
GATES = "DRAExtendedResource=true,DRADeviceTaints=true"


def drawb(*args: str) -> subprocess.CompletedProcess:
    """The command line, run from this checkout as a user runs it."""
    return subprocess.run([sys.executable, "-m", "drawb.cli", *args], capture_output=True, text=True, timeout=180,
                          cwd=ROOT)


def test_cli_connect_at_each_known_minor_reports_its_release():
    for minor in versions.known():
        out = drawb("connect", "--kubernetes-version", minor)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith(f"Connected to simulated cluster 'default', Kubernetes {versions.rules(minor).version}")
        assert f"Feature gates: {minor}'s defaults" in out.stdout


def test_cli_connect_with_gates_says_which_differ_from_the_defaults():
    out = drawb("connect", "--kubernetes-version", "1.34", "--feature-gates", GATES)
    assert out.returncode == 0, out.stderr
    assert "Feature gates: DRADeviceTaints=true, DRAExtendedResource=true (the rest: 1.34's defaults)" in out.stdout


def test_cli_global_options_run_the_command_on_that_version_and_stamp_it():
    out = drawb("--kubernetes-version", "1.36", "--feature-gates", "DRAListTypeAttributes=true", "doctor", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["featureGatesMetric"]["DRAListTypeAttributes"] is True
    assert report["featureGatesMetric"] == versions.rules("1.36").gate_values({"DRAListTypeAttributes": True})
    assert "[from the simulated cluster 'default' (Kubernetes 1.36 rules), not a real cluster]" in out.stderr


def test_cli_bad_values_are_named_errors_that_say_what_to_write():
    cases = [
        (["connect", "--feature-gates", "DRAExtendedResource"],
         "MalformedFeatureGates: feature gate entry 'DRAExtendedResource' in 'DRAExtendedResource' has no value",
         "Hint: write Name=true or Name=false"),
        (["connect", "--kubernetes-version", "1.35", "--feature-gates", "DRAListTypeAttributes=true"],
         "UnknownFeatureGate: feature gate 'DRAListTypeAttributes' does not exist in Kubernetes 1.35",
         "Hint: DRAListTypeAttributes is in Kubernetes 1.36 and later"),
        (["connect", "--kubernetes-version", "1.37", "--feature-gates", "DRAExtendedResource=false"],
         "LockedFeatureGate: feature gate DRAExtendedResource is locked to true in Kubernetes 1.37",
         "Hint: remove DRAExtendedResource from the feature gates"),
        (["--kubernetes-version", "1.33", "nodes"],
         "UnsupportedKubernetesVersion: Kubernetes 1.33 is older than drawb models", "Hint: drawb models DRA as"),
        (["connect", "--kubeconfig", "k.yaml", "--kubernetes-version", "1.36"],
         "UsageError: --kubernetes-version chooses the simulated cluster", "Hint: give one kind"),
    ]
    for args, error, hint in cases:
        out = drawb(*args)
        assert out.returncode == 2, (args, out.stdout)
        assert error in out.stderr and hint in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr


def test_cli_newer_version_connects_with_the_newest_rules_and_one_warning():
    newer = f"1.{versions.rules(versions.newest()).number + 1}"
    out = drawb("connect", "--kubernetes-version", newer)
    assert out.returncode == 0, out.stderr
    assert out.stderr.count(f"Warning: Kubernetes {newer} is newer than drawb knows ({versions.newest()}): "
                            f"checking with {versions.newest()} rules") == 1
    assert f"Kubernetes v{newer}" in out.stdout and f"{versions.newest()}'s defaults" in out.stdout


def test_magic_connect_at_a_version_with_gates_and_the_stamp_follows(shell, capsys):
    result = shell.run(f"%dra connect --kubernetes-version 1.36 --feature-gates {GATES},DRAListTypeAttributes=true")
    assert repr(result).startswith("Connected to simulated cluster 'default', Kubernetes v1.36.6")
    assert "DRAListTypeAttributes=true (the rest: 1.36's defaults)" in repr(result)
    session = shell.ipython.magics_manager.registry["DRAMagics"].session
    assert session.cluster.feature_gates_metric()["DRAListTypeAttributes"] is True
    nodes = shell.run("%dra nodes")
    assert nodes.attrs["drawb"]["cluster"] == "simulated cluster 'default' (Kubernetes 1.36 rules)"


def test_magic_config_options_choose_the_version_and_gates(shell):
    shell.run("%config DRAMagics.kubernetes_version = '1.37'")
    shell.run("%config DRAMagics.feature_gates = 'DRAListTypeAttributes=true'")
    result = shell.run("%dra connect")
    assert f"Kubernetes {versions.rules('1.37').release}" in repr(result)
    assert "DRAListTypeAttributes=true" in repr(result)


def test_magic_errors_are_named(shell):
    err = shell.fails("%dra connect --kubernetes-version 1.34 --feature-gates DRANodeAllocatableResources=true")
    assert err.splitlines()[0] == ("UnknownFeatureGate: feature gate 'DRANodeAllocatableResources' does not exist in "
                                   "Kubernetes 1.34")
    err = shell.fails("%dra connect --feature-gates DRADeviceTaints=maybe")
    assert err.splitlines()[0] == "MalformedFeatureGates: feature gate DRADeviceTaints=maybe: 'maybe' is not true or false"
