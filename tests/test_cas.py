"""One copy of each file across layers (``sweworld.cas``): identical files become one inode, what must
stay apart stays apart, Python's cached bytecode stays valid, and ``gc`` frees what no layer links."""

from __future__ import annotations

import os
import py_compile
import struct
import subprocess

from sweworld import cas

SOURCE = "def f():\n    return 42\n" * 50


def _layer(root, name: str, mtime: int):
    layer = root / name
    (layer / "pkg" / "__pycache__").mkdir(parents=True)
    (layer / "pkg" / "mod.py").write_text(SOURCE)
    os.utime(layer / "pkg" / "mod.py", (mtime, mtime))
    # compiled where the layers are mounted alike (an episode's /sweworld/venv): the same file name inside
    py_compile.compile(str(layer / "pkg" / "mod.py"), cfile=str(layer / "pkg" / "__pycache__" / "mod.pyc"),
                       dfile="/sweworld/venv/pkg/mod.py", invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    (layer / "pkg" / "data.bin").write_bytes(b"x" * 10_000)
    (layer / "pkg" / "tool").write_bytes(b"x" * 10_000)
    os.chmod(layer / "pkg" / "tool", 0o755)  # same bytes, another mode: a file of its own
    (layer / "pkg" / "empty").write_bytes(b"")
    (layer / "pkg" / "link").symlink_to("data.bin")
    return layer


def _pyc_time(path) -> int:
    return struct.unpack("<I", path.read_bytes()[8:12])[0]


def test_identical_files_of_two_layers_are_one_inode_and_modes_stay_apart(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    first, second = _layer(tmp_path, "a", 1_600_000_000), _layer(tmp_path, "b", 1_700_000_000)
    assert cas.dedup(first).linked == 0  # the first holder gives the store its inodes
    saved = cas.dedup(second)
    for name in ("data.bin", "tool", "mod.py", "__pycache__/mod.pyc"):
        assert os.stat(first / "pkg" / name).st_ino == os.stat(second / "pkg" / name).st_ino, name
    assert os.stat(first / "pkg" / "data.bin").st_ino != os.stat(first / "pkg" / "tool").st_ino
    assert os.stat(second / "pkg" / "tool").st_mode & 0o777 == 0o755
    assert (second / "pkg" / "link").is_symlink() and (second / "pkg" / "empty").stat().st_nlink == 1
    assert saved.linked == 4 and saved.bytes >= 20_000


def test_the_cached_bytecode_of_a_linked_source_stays_valid(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    first, second = _layer(tmp_path, "a", 1_600_000_000), _layer(tmp_path, "b", 1_700_000_000)
    cas.dedup(first)
    cas.dedup(second)
    source, pyc = second / "pkg" / "mod.py", second / "pkg" / "__pycache__" / "mod.pyc"
    assert int(source.stat().st_mtime) == _pyc_time(pyc) == 1_600_000_000
    from importlib.util import MAGIC_NUMBER
    data = pyc.read_bytes()
    assert data[:4] == MAGIC_NUMBER and struct.unpack("<II", data[8:16]) == (
        int(source.stat().st_mtime) & 0xFFFFFFFF, source.stat().st_size)  # what Python checks: valid


def test_files_with_extended_attributes_are_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_bytes(b"same")
        os.setxattr(tmp_path / name / "f", "user.overlay.whiteout", b"")
    cas.dedup(tmp_path / "a")
    cas.dedup(tmp_path / "b")
    assert os.stat(tmp_path / "a" / "f").st_ino != os.stat(tmp_path / "b" / "f").st_ino


def test_gc_frees_what_no_layer_links(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    first, second = _layer(tmp_path, "a", 1_600_000_000), _layer(tmp_path, "b", 1_600_000_000)
    cas.dedup(first)
    cas.dedup(second)
    assert cas.gc() == {"files": 0, "bytes": 0}
    subprocess.run(["rm", "-rf", str(first), str(second)], check=True)
    freed = cas.gc(dry_run=True)
    assert freed["files"] == 4 and cas.gc() == freed and cas.gc()["files"] == 0
