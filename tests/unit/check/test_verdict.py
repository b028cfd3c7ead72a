"""The check's verdict from nvidia-smi output and allocated devices (real H200 captures, MIG in NVIDIA's format)."""

from __future__ import annotations

from pathlib import Path

from drawb.check.verdict import (
    FAILED,
    LIST,
    MISMATCH,
    NO_GPU_VISIBLE,
    PASS,
    QUERY,
    SAMPLE,
    Expected,
    decide,
    judge_container,
)

CAPTURES = Path(__file__).parents[2] / "data" / "captures" / "h200"
H200_UUID = "GPU-4d61db8e-66d0-7ad3-1dfa-c21f381f77c4"
H200 = Expected("node", "gpu-0", "gpu", H200_UUID, product="NVIDIA H200")
OTHER = Expected("node", "gpu-1", "gpu", "GPU-11111111-2222-3333-4444-555555555555")
PARENT = "GPU-7277883e-ce1e-3b6e-6cc1-6d52e80cdb86"
MIG = Expected("node", "gpu-0-mig-1g24gb-19-0", "mig", "MIG-5b696ac1-c323-589e-a082-e6045e980bf4", PARENT, "1g.24gb")
MIG_LINES = [f"GPU 0: NVIDIA GB200 (UUID: {PARENT})",  # test_gpu_dynmig.bats's lines, NVIDIA's format
             "  MIG 1g.24gb     Device  0: (UUID: MIG-5b696ac1-c323-589e-a082-e6045e980bf4)"]


def verdict(lines, expected, payload=LIST, code=0):
    return decide([judge_container("c", code, lines, expected, payload)])


def test_real_h200_listing_of_the_allocated_gpu_passes():
    lines = (CAPTURES / "nvidia-smi-L.txt").read_text().splitlines()
    assert verdict(lines, [H200])[0] == PASS


def test_real_h200_query_csv_passes():
    lines = (CAPTURES / "nvidia-smi-query.csv").read_text().splitlines()
    assert verdict(lines, [H200], QUERY)[0] == PASS


def test_a_different_gpu_is_a_mismatch_naming_both():
    lines = (CAPTURES / "nvidia-smi-L.txt").read_text().splitlines()
    status, reason = verdict(lines, [OTHER])
    assert status == MISMATCH
    assert OTHER.uuid in reason and H200_UUID in reason
    assert "allocated but not seen: gpu-1" in reason and f"seen but not allocated: GPU {H200_UUID}" in reason


def test_mig_device_matches_by_its_own_uuid_and_its_parent():
    assert verdict(MIG_LINES, [MIG])[0] == PASS
    wrong_parent = [MIG_LINES[0].replace(PARENT, OTHER.uuid), MIG_LINES[1]]
    status, reason = verdict(wrong_parent, [MIG])
    assert status == MISMATCH and f"allocated on {PARENT}" in reason


def test_dynamic_mig_without_uuid_matches_by_parent_and_profile():
    unprepared = Expected("node", "gpu-0-mig-1g24gb-19-0", "mig", None, PARENT, "1g.24gb")
    assert verdict(MIG_LINES, [unprepared])[0] == PASS
    assert verdict(MIG_LINES, [Expected("node", "m", "mig", None, PARENT, "2g.48gb")])[0] == MISMATCH


def test_query_csv_sees_a_mig_device_as_its_parent():
    csv = ["index, uuid, name, memory.total [MiB], driver_version", f"0, {PARENT}, NVIDIA GB200, 189471 MiB, 580.1"]
    assert verdict(csv, [MIG], QUERY)[0] == PASS


def test_no_devices_found_and_empty_output_are_no_gpu_visible():
    assert verdict(["No devices were found"], [H200], code=6)[0] == NO_GPU_VISIBLE
    assert verdict([], [H200])[0] == NO_GPU_VISIBLE


def test_a_failing_container_reports_its_exit_code():
    status, reason = verdict(["Segmentation fault"], [H200], code=139)
    assert status == FAILED and "exit code 139" in reason
    status, reason = verdict(["garbage"], [H200])
    assert status == FAILED and "not understood" in reason


def test_sample_payload_compares_the_listing_and_keeps_the_sample_output():
    lines = [f"GPU 0: NVIDIA H200 (UUID: {H200_UUID})", "[Vector addition of 50000 elements]", "Test PASSED"]
    assert verdict(lines, [H200], SAMPLE)[0] == PASS
    assert verdict(lines, [H200], SAMPLE, code=1)[0] == FAILED


def test_two_gpus_need_both_and_only_both():
    both = [f"GPU 0: NVIDIA H200 (UUID: {H200_UUID})", f"GPU 1: NVIDIA H200 (UUID: {OTHER.uuid})"]
    assert verdict(both, [H200, OTHER])[0] == PASS
    status, reason = verdict(both[:1], [H200, OTHER])
    assert status == MISMATCH and "allocated but not seen: gpu-1" in reason and "seen but not" not in reason
