"""Pulling without a daemon or root: through ``registries.conf`` (an insecure local registry, a mirror
of docker.io), every layer once by digest, unpacked as an ordinary user; one clear error per failure."""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess

import pytest

from oci_images import Registry
from sweworld.core.errors import ImageError
from sweworld.oci import store
from sweworld.oci.cachedir import confined
from sweworld.oci.pull import pull
from sweworld.oci.reference import parse


def test_names_are_read_as_docker_reads_them():
    assert parse("python:3.11").source == "docker://docker.io/library/python:3.11"
    assert parse("swebench/sweb.eval.x86_64.psf_1776_requests-863").name.endswith("requests-863:latest")
    assert parse("127.0.0.1:5000/team/x").registry == "127.0.0.1:5000"
    assert parse("oci:/some/dir:tag").source == "oci:/some/dir:tag"
    assert parse("docker-archive:/x.tar").transport == "docker-archive"
    for bad in ("Upper/case", "a//b", "x:bad tag", ""):
        with pytest.raises(ImageError, match=r"image name|empty"):
            parse(bad)


def test_two_images_sharing_a_base_store_it_once(store_home, registry):
    base = pull("docker.io/library/base:1")  # served by the mirror registries.conf names
    derived = pull(f"{registry.address}/team/derived:1")
    assert derived.layers[0] == base.layers[0] and len(derived.layers) == 2
    assert sorted(p.name for p in (store.root() / "layers").iterdir() if p.is_dir()) == sorted(
        {d.split(":")[1] for d in derived.layers})
    assert derived.env["IMAGE_VAR"] == "from-the-image" and derived.workdir == "/opt"
    blobs = list((store.root() / "blobs" / "sha256").iterdir())
    assert len(blobs) == 2 + 2 * 2  # two layers, and each image's manifest and config
    assert pull(f"{registry.address}/team/derived:1") == derived  # the second time: the store answers


def test_a_layer_is_unpacked_as_an_ordinary_user_may(store_home, registry):
    record = pull(f"{registry.address}/team/derived:1")
    top = store.layer_dir(record.layers[1])
    doomed = os.lstat(top / "etc" / "doomed")
    assert stat.S_ISCHR(doomed.st_mode) and doomed.st_rdev == 0  # the whiteout, overlay's way
    assert os.getxattr(top / "opt" / "old", "user.overlay.opaque") == b"y"
    assert not os.stat(top / "opt" / "tool").st_mode & 0o6000  # setuid dropped
    assert os.stat(top / "opt" / "same").st_ino == os.stat(top / "opt" / "old" / "c").st_ino
    assert os.readlink(top / "opt" / "out") == "/etc/marked"  # resolved inside the episode, never here
    assert stat.S_ISFIFO(os.lstat(top / "opt" / "pipe").st_mode)
    assert not os.path.lexists(top / "opt" / "null")
    meta = json.loads(top.with_suffix(".json").read_text())
    assert meta["setuid_dropped"] == ["opt/tool"] and meta["skipped"] == [["opt/null", "a device (1:3)"]]
    assert meta["diff_id"] == record.layers[1]


@pytest.mark.parametrize(("name", "message"), [
    ("{registry}/team/derived:nope", "no such repository or tag"),
    ("{registry}/team/absent:1", "no such repository or tag"),
    ("127.0.0.1:9/team/derived:1", "cannot be reached"),
    ("Not A Name", "is not an image name"),
])
def test_each_failure_is_one_error_naming_the_image_and_the_instance(store_home, registry, name, message):
    with pytest.raises(ImageError, match=message) as caught:
        pull(name.format(registry=registry.address), instance="team__derived-1")
    assert caught.value.where.startswith("team__derived-1: ") and caught.value.hint


def test_a_registry_not_marked_insecure_is_named_with_the_fix(store_home, registry, tmp_path, monkeypatch):
    plain = tmp_path / "registries.conf"
    plain.write_text("")
    monkeypatch.setenv("CONTAINERS_REGISTRIES_CONF", str(plain))
    with pytest.raises(ImageError, match="plain HTTP") as caught:
        pull(f"{registry.address}/team/derived:1")
    assert "insecure = true" in caught.value.hint


def test_remove_then_gc_frees_only_what_no_image_holds(store_home, registry):
    base = pull(f"{registry.address}/library/base:1")
    derived = pull(f"{registry.address}/team/derived:1")
    assert store.remove(derived.key) and {r.key for r in store.list_images()} == {base.key}
    freed = store.gc()
    assert freed["layers"] == 1 and freed["blobs"] == 3 and freed["bytes"] > 0
    assert all(d.is_dir() for d in base.layer_dirs()) and not store.layer_dir(derived.layers[1]).exists()
    assert store.gc() == {"layers": 0, "blobs": 0, "bytes": 0}


@pytest.fixture(scope="module")
def locked_registry(tmp_path_factory, built):
    """A registry that wants a login (htpasswd, a bcrypt hash made by the C library's crypt)."""
    crypt = pytest.importorskip("crypt", reason="Python's crypt module makes the registry's bcrypt hash")
    root = tmp_path_factory.mktemp("locked")
    htpasswd = root / "htpasswd"
    htpasswd.write_text(f"tester:{crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH))}\n")
    served = Registry(root, htpasswd=htpasswd)
    served.push(built["derived"], "1", "team/private:1", creds="tester:s3cret")
    yield served
    served.close()


def test_a_login_comes_from_the_credentials_file_and_a_refused_one_is_named(store_home, locked_registry, tmp_path,
                                                                           monkeypatch):
    conf = tmp_path / "registries.conf"
    conf.write_text(f'[[registry]]\nlocation = "{locked_registry.address}"\ninsecure = true\n')
    monkeypatch.setenv("CONTAINERS_REGISTRIES_CONF", str(conf))
    name = f"{locked_registry.address}/team/private:1"
    with pytest.raises(ImageError, match="refused the login") as caught:
        pull(name, instance="team__private-1")
    assert "skopeo login" in caught.value.hint
    auth = tmp_path / "auth.json"
    token = base64.b64encode(b"tester:s3cret").decode()
    auth.write_text(json.dumps({"auths": {locked_registry.address: {"auth": token}}}))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth))
    assert pull(name).env["IMAGE_VAR"] == "from-the-image"


def test_a_local_layout_and_a_docker_archive_are_images_too(store_home, built, tmp_path):
    from_layout = pull(f"oci:{built['derived']}:1")
    archive = tmp_path / "derived.tar"
    argv, env = confined(["skopeo", "copy", "--quiet", "--insecure-policy", f"oci:{built['derived']}:1",
                          f"docker-archive:{archive}:team/derived:1"], store.root())
    subprocess.run(argv, check=True, capture_output=True, env={**os.environ, **env})
    from_archive = pull(f"docker-archive:{archive}")
    assert from_archive.layers == from_layout.layers and from_archive.env["IMAGE_VAR"] == "from-the-image"
    assert all(d.is_dir() for d in from_archive.layer_dirs())
