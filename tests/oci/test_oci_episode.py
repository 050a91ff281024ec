"""An episode on an image: the image's layers under a private upper layer at ``/``, in the same
isolation as every episode, with the image's ``Env`` and ``WorkingDir``; its whiteouts, opaque
directories and links seen as the image means them; nothing it writes reaches the store or another
episode; nothing of the host shows. As root and as an ordinary user."""

from __future__ import annotations

import os

import pytest

from sweworld.oci import store
from sweworld.oci.pull import pull
from sweworld.sandbox import Layers, Sandbox, SandboxConfig

pytestmark = pytest.mark.bwrap


def _open(record) -> Sandbox:
    return Sandbox({"/": Layers(record.layer_dirs())}, workdir=record.workdir or "/",
                   config=SandboxConfig(env=record.env))


def test_an_episode_sees_the_image_as_the_image_means_it(store_home, registry):
    record = pull(f"{registry.address}/team/derived:1")
    with _open(record) as episode:
        out = episode.run("pwd; echo $IMAGE_VAR; ls /opt/old; cat /opt/same /opt/out /opt/rel; "
                          "test -e /etc/doomed || echo doomed-gone; test -u /opt/tool || echo no-setuid; "
                          "/opt/tool; bash -c 'echo bash $BASH_VERSION' | cut -c1-6; id -u").output.split()
        assert out == ["/opt", "from-the-image", "c", "c", "from", "the", "base", "c", "doomed-gone", "no-setuid",
                       "tool", "bash", "5", "0"]
        mounts = episode.run("cat /proc/self/mountinfo").output
        assert os.path.realpath(os.environ["SWEWORLD_HOME"]) not in mounts and str(store.root()) not in mounts


def test_what_an_episode_writes_is_its_own(store_home, registry):
    record = pull(f"{registry.address}/team/derived:1")
    before = sorted(os.listdir(store.layer_dir(record.layers[0]) / "etc"))
    with _open(record) as first, _open(record) as second:
        first.run("echo mine > /etc/marked; rm /bin/ls; mkdir /new && echo x > /new/file")
        assert first.run("cat /etc/marked; test -e /bin/ls || echo ls-gone; cat /new/file").output.split() == [
            "mine", "ls-gone", "x"]
        assert second.run("cat /etc/marked; ls /bin/ls; test -e /new || echo no-new").output.split() == [
            "from", "the", "base", "/bin/ls", "no-new"]
    assert sorted(os.listdir(store.layer_dir(record.layers[0]) / "etc")) == before
    assert (store.layer_dir(record.layers[0]) / "etc" / "marked").read_text() == "from the base\n"


def test_the_episode_keeps_the_sandbox_isolation(store_home, registry):
    record = pull(f"{registry.address}/team/derived:1")
    with _open(record) as episode:
        assert episode.run("echo > /dev/tcp/127.0.0.1/1 2>&1 || echo no-network").output.strip().endswith("no-network")
        assert episode.run("ls /proc | grep -c '^[0-9]'").output.strip() in {"2", "3", "4"}  # its own pids
        assert "ok" in episode.run("ulimit -v; echo ok").output
