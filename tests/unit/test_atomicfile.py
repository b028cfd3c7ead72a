"""write_atomic: a reader sees the old file or the new one, and a failed write leaves no temporary file."""

import os

import pytest

from drawb.atomicfile import write_atomic


def test_replaces_the_file_whole_and_keeps_newlines(tmp_path):
    target = tmp_path / "a" / "b.txt"
    write_atomic(target, "old\r\n")
    write_atomic(target, "new\r\nline\n")
    assert target.read_bytes() == b"new\r\nline\n"
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["b.txt"]


def test_a_failed_write_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "b.bin"
    write_atomic(target, b"old")

    def interrupted(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.bin"]


def test_a_missing_folder_is_an_error_when_folders_are_not_made(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "missing" / "c.txt", "x", make_folders=False)
    assert not (tmp_path / "missing").exists()
