"""Environments and install layers packed on one home and unpacked in another (``envs.archive``,
``envs.fetched``): the same files, links, modes, whiteouts and overlay attributes arrive; a damaged
or wrong archive is refused and nothing half-unpacked is ever published; the builder's side logs a
failed fetch and says to build."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import stat
from pathlib import Path

import pytest

from sweworld.envs import archive
from sweworld.envs.fetched import fetched
from sweworld.envsource import Packed

ENV, INST = "e" * 16, "i" * 16


def home(monkeypatch, path: Path) -> Path:
    monkeypatch.setenv("SWEWORLD_HOME", str(path))
    return path / "envs"


def make_env(envs: Path) -> Path:
    final = envs / ENV
    (final / "venv" / "bin").mkdir(parents=True)
    (final / "venv" / "bin" / "python").symlink_to("/usr/bin/python3")  # absolute, as a venv's
    tool = final / "venv" / "bin" / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o775)
    os.link(tool, final / "venv" / "bin" / "tool-again")
    (final / "logs").mkdir()
    (final / "logs" / "x.log").write_text("not packed")
    (final / "env.json").write_text(json.dumps({"key": ENV, "complete": True}))
    return final


def whiteout(path: Path) -> bool:
    try:
        os.mknod(path, stat.S_IFCHR | 0o000, os.makedev(0, 0))
    except PermissionError:
        return False
    return True


def xattr(path: Path, name: str, value: bytes) -> bool:
    try:
        os.setxattr(path, name, value, follow_symlinks=False)
    except OSError:
        return False
    return True


def make_layer(envs: Path) -> tuple[Path, bool, bool]:
    final = envs / ENV / "instances" / INST
    (final / "testbed" / "pkg").mkdir(parents=True)
    (final / "testbed" / "pkg" / "mod.py").write_text("x = 1\n")
    (final / "venv" / "lib").mkdir(parents=True)
    has_whiteout = whiteout(final / "venv" / "lib" / "old.dist-info")
    has_xattrs = (xattr(final / "testbed" / "pkg", "user.overlay.opaque", b"y")
                  and xattr(final / "testbed" / "pkg", "user.overlay.origin", b"\x00\x01node-a"))
    (final / "meta.json").write_text(json.dumps({"key": INST, "env": ENV, "complete": True}))
    return final, has_whiteout, has_xattrs


def test_an_environment_travels_with_links_and_modes(monkeypatch, tmp_path):
    make_env(home(monkeypatch, tmp_path / "a"))
    packed = archive.pack("env", ENV)
    assert packed is not None and packed.data[:2] == b"\x1f\x8b"
    envs_b = home(monkeypatch, tmp_path / "b")
    final = archive.unpack(packed, "env", ENV)
    assert final == envs_b / ENV
    venv = final / "venv" / "bin"
    assert os.readlink(venv / "python") == "/usr/bin/python3"
    assert stat.S_IMODE((venv / "tool").stat().st_mode) == 0o775
    assert (venv / "tool").stat().st_ino == (venv / "tool-again").stat().st_ino
    assert not (final / "logs").exists()  # the build logs stay on the node that built it
    meta = json.loads((final / "env.json").read_text())
    assert meta["key"] == ENV and meta["fetched"]["sha256"] == packed.digest
    assert [p.name for p in final.parent.iterdir()] == [ENV]  # no staging left


def test_an_install_layer_keeps_whiteouts_and_the_overlay_attributes_that_mean_something(monkeypatch, tmp_path):
    _, has_whiteout, has_xattrs = make_layer(home(monkeypatch, tmp_path / "a"))
    packed = archive.pack("instance", f"{ENV}/{INST}")
    home(monkeypatch, tmp_path / "b")
    final = archive.unpack(packed, "instance", f"{ENV}/{INST}")
    assert (final / "testbed" / "pkg" / "mod.py").read_text() == "x = 1\n"
    if has_whiteout:
        st = (final / "venv" / "lib" / "old.dist-info").lstat()
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
    if has_xattrs:
        assert os.listxattr(final / "testbed" / "pkg") == ["user.overlay.opaque"]  # not origin
        assert os.getxattr(final / "testbed" / "pkg", "user.overlay.opaque") == b"y"


def test_nothing_incomplete_is_packed(monkeypatch, tmp_path):
    final = make_env(home(monkeypatch, tmp_path / "a"))
    (final / "env.json").write_text(json.dumps({"key": ENV}))
    assert archive.pack("env", ENV) is None
    with pytest.raises(archive.ArchiveError, match="no such environment kind"):
        archive.pack("instance", ENV)


def refused(packed: Packed, tmp_path: Path, monkeypatch, match: str) -> None:
    envs_b = home(monkeypatch, tmp_path / "b")
    with pytest.raises(archive.ArchiveError, match=match):
        archive.unpack(packed, "env", ENV)
    assert not envs_b.exists() or not any(envs_b.iterdir())  # nothing published, no staging left


def test_a_damaged_truncated_or_wrong_archive_is_refused_and_nothing_is_published(monkeypatch, tmp_path):
    make_env(home(monkeypatch, tmp_path / "a"))
    packed = archive.pack("env", ENV)
    damaged = packed.data[:100] + bytes([packed.data[100] ^ 1]) + packed.data[101:]
    refused(dataclasses.replace(packed, data=damaged), tmp_path, monkeypatch, "sha256 differs")
    cut = packed.data[: len(packed.data) // 2]
    refused(Packed("env", ENV, cut, hashlib.sha256(cut).hexdigest()), tmp_path, monkeypatch,
            "unpacking failed")
    envs_a = home(monkeypatch, tmp_path / "a")
    (envs_a / ENV / "env.json").write_text(json.dumps({"key": "f" * 16, "complete": True}))
    wrong = archive.pack("env", ENV)
    refused(wrong, tmp_path, monkeypatch, "names")
    refused(dataclasses.replace(packed, key="f" * 16), tmp_path, monkeypatch, "instead")


class Source:
    """A source whose 'other node' is another home of this process."""

    def __init__(self, monkeypatch, other: Path, mine: Path, corrupt: bool = False):
        self.monkeypatch, self.other, self.mine, self.corrupt = monkeypatch, other, mine, corrupt
        self.announced: list = []

    def fetch(self, kind, key, pack):
        home(self.monkeypatch, self.other)
        try:
            packed = pack(kind, key)
        finally:
            home(self.monkeypatch, self.mine)
        return dataclasses.replace(packed, digest="0" * 64) if self.corrupt and packed else packed

    def announce(self, kind, key):
        self.announced.append((kind, key))


def test_the_builder_side_fetches_or_logs_one_warning_and_says_build(monkeypatch, tmp_path, caplog):
    make_env(home(monkeypatch, tmp_path / "a"))
    envs_b = home(monkeypatch, tmp_path / "b")
    assert not fetched("env", ENV)  # no source installed: build
    assert not fetched("env", "f" * 16, Source(monkeypatch, tmp_path / "a", tmp_path / "b"))  # nobody has it
    with caplog.at_level(logging.WARNING, logger="sweworld.envs.fetched"):
        assert not fetched("env", ENV, Source(monkeypatch, tmp_path / "a", tmp_path / "b", corrupt=True))
    assert len(caplog.records) == 1 and "building it here instead" in caplog.records[0].getMessage()
    assert not (envs_b / ENV).exists()
    assert fetched("env", ENV, Source(monkeypatch, tmp_path / "a", tmp_path / "b"))
    assert json.loads((envs_b / ENV / "env.json").read_text())["complete"]
