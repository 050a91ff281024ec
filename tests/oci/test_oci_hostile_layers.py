"""A hostile image, pulled for real (skopeo, from an OCI layout): nothing is written outside its layer or
through a link, no host file is read into it, and the pull goes on with one warning naming the image,
the layer and its unsafe entries."""

from __future__ import annotations

import json
import logging
import os
import stat

import pytest

from oci_images import Entry, layer, write_layout
from sweworld.core.errors import ImageError
from sweworld.oci import store
from sweworld.oci.pull import pull
from sweworld.oci.tree import tree


def test_a_hostile_layer_is_unpacked_inside_itself_with_one_warning(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("SWEWORLD_HOME", str(tmp_path / "home"))
    host = tmp_path / "host"  # stands for the host's own files, which the image's links point at
    (host / "inner").mkdir(parents=True)
    (host / "passwd").write_text("host secret\n")
    (host / "inner" / "key").write_text("host key\n")
    os.chmod(host, 0o755)
    base = layer(None, [Entry("opt", "dir", mode=0o755), Entry("opt/escape", "symlink", link=str(host)),
                        Entry("opt/file", data=b"from the base\n")])
    top = layer(None, [
        Entry("../../etc/evil", data=b"evil\n"),
        Entry("/abs/file", data=b"absolute\n"),
        Entry("opt/leak", "hardlink", link="opt/escape/passwd"),  # through the base's link: the host's file
        Entry("opt/same", "hardlink", link="opt/file"),  # an ordinary one, copied from the base
        Entry("opt/out", "hardlink", link="../../../etc/shadow"),
        Entry("opt/climb", "symlink", link="../../../../etc"),
        Entry("swap", "dir", mode=0o777), Entry("swap", "symlink", link=str(host)),  # then made a link to the host
    ])
    layout = write_layout(tmp_path / "hostile", "1", [base, top])
    name = f"oci:{layout}:1"
    with caplog.at_level(logging.WARNING, logger="sweworld.oci"):
        record = pull(name, instance="evil__image-1")  # the run goes on
    top_dir = store.layer_dir(record.layers[1])
    assert not (tmp_path / "home" / "images" / "etc").exists() and not (top_dir.parent / "etc").exists()
    assert (top_dir / "abs" / "file").read_bytes() == b"absolute\n"  # read as Docker reads it
    assert not os.path.lexists(top_dir / "opt" / "leak")  # the host's file was not copied in
    assert (top_dir / "opt" / "same").read_bytes() == b"from the base\n"
    assert os.readlink(top_dir / "opt" / "climb") == "../../../../etc"  # kept: resolved inside the episode
    assert stat.S_IMODE(host.stat().st_mode) == 0o755  # the replaced directory's mode was not set through the link
    assert (host / "passwd").read_text() == "host secret\n"
    unsafe = dict(json.loads(top_dir.with_suffix(".json").read_text())["unsafe"])
    assert unsafe == {"../../etc/evil": "a path out of the layer", "/abs/file": "an absolute path, written as abs/file",
                      "opt/out": "a hard link out of the layer: ../../../etc/shadow",
                      "opt/climb": "a link out of the layer, kept: ../../../../etc"}
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1, warned
    assert warned[0].startswith(f"evil__image-1: {name}: layer {record.layers[1]} holds 4 unsafe entries")
    assert "'../../etc/evil' (a path out of the layer)" in warned[0] and "and 1 more" in warned[0]
    with pytest.raises(ImageError, match="no directory /opt/escape/inner"):
        tree(record, "/opt/escape/inner")  # never read through the image's link into the host
