"""``versions``: the gate table a user reads is drawb.versions' own, through both front ends."""

from __future__ import annotations

from drawb import versions
from drawb.cli import main


def test_the_table_has_every_gate_of_every_known_minor(shell):
    frame = shell.run("%dra versions")
    assert list(frame.columns) == ["gate", *versions.known()]
    every = {name for minor in versions.known() for name in versions.rules(minor).gates}
    assert set(frame["gate"]) == every
    row = frame.set_index("gate").loc["DRAExtendedResource"]
    assert (row["1.34"], row["1.36"], row["1.37"]) == ("alpha, off", "beta, on", "GA, on, locked")
    assert frame.set_index("gate").loc["DRADeviceTaintRules", "1.34"] == "-"


def test_one_minor_in_detail_names_components_and_guarded_fields(capsys):
    assert main(["versions", "--minor", "v1.36.3-gke.100"]) == 0
    out, err = capsys.readouterr()
    assert "DRAListTypeAttributes" in out and "DRAOptionalNodeOperations" not in out
    assert "kube-controller-manager" in out and "DeviceClass spec.extendedResourceName" in out
    assert "Kubernetes 1.36 (facts of v1.36.3); resource.k8s.io served by default: v1" in err


def test_an_older_minor_is_refused_by_name(capsys):
    assert main(["versions", "--minor", "1.30"]) == 2
    assert "Kubernetes 1.30 is older than drawb models" in capsys.readouterr().err
