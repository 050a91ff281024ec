"""Sdist unpacking and committing rules, offline: a hand-made archive seeded into the sdist cache."""

from __future__ import annotations

import io
import os
import tarfile

from sweworld.repos import RepoStore, pypi_repo

NAME, VERSION = "sweworld-fixture-pkg", "1.0"


def _archive(root, *, mtime: int, owner: str) -> None:
    """Write sdists/NAME-VERSION/NAME-VERSION.tar.gz under the repos cache ``root``."""
    dest = root / "sdists" / f"{NAME}-{VERSION}"
    dest.mkdir(parents=True)
    top = f"{NAME}-{VERSION}"
    with tarfile.open(dest / f"{top}.tar.gz", "w:gz") as tf:
        def add(name: str, data: bytes = b"", mode: int = 0o644, kind: bytes = tarfile.REGTYPE,
                link: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime, info.uname, info.linkname = kind, mode, mtime, owner, link
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            tf.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

        add(top, mode=0o755, kind=tarfile.DIRTYPE)
        add(f"{top}/.gitattributes", b"* text=auto\n")
        add(f"{top}/.gitignore", b"*.log\nbuild/\n")
        add(f"{top}/debug.log", b"ignored but shipped\n")
        add(f"{top}/build/gen.py", b"GENERATED = True\n")
        add(f"{top}/crlf.txt", b"a\r\nb\r\n")
        add(f"{top}/bin/tool", b"#!/bin/sh\necho tool\n", mode=0o775)
        add(f"{top}/data.txt", b"data\n", mode=0o600)
        add(f"{top}/link", kind=tarfile.SYMTYPE, link="data.txt")
        add(f"{top}/evil", kind=tarfile.SYMTYPE, link="../../etc/passwd")
        add(f"{top}/../escape.txt", b"outside\n")


def test_sdist_rules_and_clean_tree(tmp_path, run_git):
    shas = []
    for i, (mtime, owner, umask) in enumerate([(1_000_000, "alice", 0o022), (2_000_000, "bob", 0o077)]):
        root = tmp_path / f"cache{i}"
        _archive(root, mtime=mtime, owner=owner)
        old = os.umask(umask)
        try:
            shas.append(pypi_repo(NAME, VERSION, root=root)[1])
        finally:
            os.umask(old)
    # timestamps, owners and the umask change the archive bytes' metadata, not the commit
    assert shas[0] == shas[1]

    mirror = tmp_path / "cache0" / "mirrors" / f"pypi__{NAME}__{VERSION}.git"
    by_path = {line.split("\t")[1]: line.split()[0] for line in run_git(mirror, "ls-tree", "-r", shas[0]).splitlines()}
    assert set(by_path.values()) == {"100644", "100755", "120000"}
    assert by_path["bin/tool"] == "100755" and by_path["data.txt"] == "100644" and by_path["link"] == "120000"
    assert {"debug.log", "build/gen.py", ".gitignore", "crlf.txt"} <= set(by_path)
    assert "evil" not in by_path and "escape.txt" not in by_path and "../escape.txt" not in by_path

    tree = RepoStore(root=tmp_path / "cache0").tree("local/pkg", shas[0], f"pypi:{NAME}=={VERSION}")
    assert (tree / "crlf.txt").read_bytes() == b"a\r\nb\r\n"
    assert (tree / "debug.log").read_text() == "ignored but shipped\n"
    assert os.readlink(tree / "link") == "data.txt"
    assert os.access(tree / "bin" / "tool", os.X_OK)
    assert run_git(tree, "status", "--porcelain", "--untracked-files=all", "--ignored") == ""
    assert not (tmp_path / "cache0" / "mirrors" / "escape.txt").exists()
