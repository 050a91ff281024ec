"""Images built here, pushed to a real registry on 127.0.0.1, and a store of their own per test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oci_images import Entry, Registry, debian_rootfs, layer, opaque, whiteout, write_layout

MARKED = Entry("etc/marked", data=b"from the base\n")


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict[str, Path]:
    """Two images sharing a base layer (Debian's libc, bash and busybox; ``/opt/old`` holding two files):
    ``base`` and ``derived``, whose top layer deletes a file (whiteout), replaces a directory (opaque),
    and adds a hard link, links in and out of the root, a setuid file, a device node and a fifo."""
    rootfs = debian_rootfs()
    base = layer(rootfs, [MARKED, Entry("opt/old", "dir", mode=0o755), Entry("opt/old/a", data=b"a\n"),
                          Entry("opt/old/b", data=b"b\n"), Entry("etc/doomed", data=b"gone soon\n")])
    top = layer(None, [whiteout("etc/doomed"), Entry("opt/old", "dir", mode=0o755), opaque("opt/old"),
                       Entry("opt/old/c", data=b"c\n"), Entry("opt/tool", data=b"#!/bin/sh\necho tool\n", mode=0o4755),
                       Entry("opt/same", "hardlink", link="opt/old/c"), Entry("opt/out", "symlink", link="/etc/marked"),
                       Entry("opt/rel", "symlink", link="old/c"), Entry("opt/null", "chardev"),
                       Entry("opt/pipe", "fifo", mode=0o644)])
    config = {"Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "IMAGE_VAR=from-the-image"], "WorkingDir": "/opt"}
    root = tmp_path_factory.mktemp("layouts")
    return {"base": write_layout(root / "base", "1", [base], {"Env": ["PATH=/usr/bin:/bin"]}),
            "derived": write_layout(root / "derived", "1", [base, top], config)}


@pytest.fixture(scope="session")
def registry(tmp_path_factory, built):
    served = Registry(tmp_path_factory.mktemp("registry"))
    served.push(built["base"], "1", "library/base:1")
    served.push(built["derived"], "1", "team/derived:1")
    yield served
    served.close()


@pytest.fixture
def store_home(tmp_path, monkeypatch, registry) -> Path:
    """A store of this test's own, the registry's ``registries.conf`` in force."""
    home = tmp_path / "home"
    monkeypatch.setenv("SWEWORLD_HOME", str(home))
    monkeypatch.setenv("CONTAINERS_REGISTRIES_CONF", str(registry.conf))
    return home
