"""Mined (or any recipe-built) instances as OCI instance images: ``sweworld export images``.

Each instance's built environment (``envs.build``: the shared venv, the instance's install layer,
the base tree) becomes one image of an OCI layout (``oci.write.Layout``), daemonless and rootless;
its layers, bottom first, each stored once by digest and shared by every image that has it:

1. the base file system: Debian's libc, bash, busybox's utilities, git and patch (``envs.debian``:
   ``apt-get download`` + ``dpkg-deb -x``), the same packages as this machine's Debian release,
   plus the directories and files an episode needs (``/tmp``, ``/etc/passwd``, busybox's applets);
2. the interpreter: the venv's Python is this machine's (uv's or pyenv's), so its install tree goes
   in at its own absolute path (the venv's ``pyvenv.cfg`` and ``bin/python`` name it), with the host
   libraries it and the venv's extension modules load (``ldd``) that layer 1 lacks; shared by every
   environment of that interpreter. Limit: the image holds that path of this machine (for example
   ``~/.pyenv/versions/3.11.7`` of the user who built it), and an interpreter that needs more than its libraries (a
   locale archive, a certificate store) finds only what Debian's packages bring;
3. the environment: the venv at ``/sweworld/venv`` (shared by every instance of the environment);
4. the repository at its base commit: ``/testbed``, its own git repository holding that commit;
5. the instance: the install layer over both (``/testbed`` builds, ``.git/index``: ``git status``
   clean; the venv's editable install), overlay whiteouts written as OCI's.

The config: ``Env`` (``PATH`` with the venv first, ``VIRTUAL_ENV``, ``LANG``), ``WorkingDir``
``/testbed``. The rows written beside are SWE-rebench rows (``mine.export``: ``install_config``
says how the tests run and are parsed) whose ``docker_image``/``image_name`` is ``oci:LAYOUT:TAG``,
so ``--env-source image`` runs them as they are; ``skopeo copy oci:LAYOUT:TAG docker://...``
publishes an image under any name.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweworld.core.errors import SWEWorldError
from sweworld.core.types import Task
from sweworld.envs.build import VENV
from sweworld.envs.rebench import to_row
from sweworld.mine.export import install_config, meta
from sweworld.oci.write import Blob, Entry, Layout, layer

log = logging.getLogger(__name__)

BASE_ROOTS = ("libc6", "libc-bin", "libtinfo6", "bash", "busybox-static", "git", "patch")
"""libc-bin: the C.UTF-8 locale; git and patch: the harness's apply chain and every episode's diff."""
NOT_FOLLOWED = frozenset({"perl", "perl-base", "perl-modules-5.36", "libperl5.36", "liberror-perl", "debconf",
                          "cdebconf", "dpkg", "install-info", "git-man", "ca-certificates", "openssl", "tar",
                          "readline-common", "gawk", "mawk", "original-awk"})
"""Never followed: an image runs no maintainer scripts, and git's porcelain in C is enough."""
PATH = f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
WORKDIR = "/testbed"
_LDD = re.compile(r"=>\s+(/\S+)\s+\(0x")


@dataclass
class ImagesSummary:
    """What an export wrote: rows, images (tag -> manifest digest), failures (id -> first line)."""

    rows: int = 0
    images: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


def image_tag(task: Task) -> str:
    """The tag of ``task``'s image in the layout: its instance id, lower case, each run of other
    characters one ``.`` (skopeo's ``oci:`` names refuse ``__``)."""
    return re.sub(r"[^a-z0-9-]+", ".", task.instance_id.lower()).strip(".-")[:128]


def _extras(tree: Path) -> bytes:
    """Directories, users and busybox's applets (where no package gave the command) over ``tree``."""
    found = subprocess.run([str(tree / "bin" / "busybox"), "--list"], capture_output=True, text=True, check=True)
    applets = [Entry(f"bin/{name}", kind="symlink", link="busybox") for name in found.stdout.split()
               if not any(os.path.lexists(tree / d / name) for d in ("bin", "usr/bin", "sbin", "usr/sbin"))]
    dirs = [Entry(name, kind="dir", mode=mode) for name, mode in
            (("tmp", 0o1777), ("root", 0o700), ("etc", 0o755), ("proc", 0o755), ("dev", 0o755), ("testbed", 0o755))]
    users = [Entry("etc/passwd", data=b"root:x:0:0:root:/root:/bin/bash\n"), Entry("etc/group", data=b"root:x:0:\n")]
    return layer(entries=[*dirs, *users, *applets])


def _libraries(roots: Iterable[Path], base: Path, inside: Iterable[Path]) -> list[Path]:
    """Host libraries that the ELF files under ``roots`` load (``ldd``), except those under
    ``inside`` (they come along) and those whose name ``base``'s library directories have."""
    inside = [str(p) for p in inside]
    wanted: set[str] = set()
    for root in roots:
        for folder, _dirs, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                if (".so" in name or os.path.basename(folder) == "bin") and os.path.isfile(path) \
                        and not os.path.islink(path):
                    got = subprocess.run(["ldd", path], capture_output=True, text=True)
                    wanted.update(_LDD.findall(got.stdout) if got.returncode == 0 else ())
    libdirs = ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "lib", "usr/lib")
    return sorted(Path(p) for p in wanted if not p.startswith(tuple(inside))
                  and not any(os.path.lexists(base / d / Path(p).name) for d in libdirs))


class ImageWriter:
    """Writes instance images into one layout, each shared layer once per run (keyed by what it holds)."""

    def __init__(self, layout: Path, builder: Any):
        self.layout = Layout(layout)
        self.builder = builder
        self.shared: dict[str, list[Blob]] = {}

    def _once(self, key: str, make) -> list[Blob]:
        if key not in self.shared:
            self.shared[key] = make()
        return self.shared[key]

    def _base(self) -> tuple[list[Blob], Path]:
        from sweworld.envs import debian
        tree = debian.unpack(debian.closure(BASE_ROOTS, exclude=NOT_FOLLOWED), "image-base")
        return self._once("base", lambda: [self.layout.add_tree([(tree, "")], skip={".complete"}),
                                           self.layout.add_layer(_extras(tree))]), tree

    def _interpreter(self, env: Any, base: Path) -> list[Blob]:
        prefix = env.interpreter.prefix

        def make() -> list[Blob]:
            libs = _libraries([prefix, env.venv], base, [prefix, env.venv])
            with tempfile.TemporaryDirectory(dir=self.layout.path, prefix=".libs-") as staging:
                for lib in libs:
                    target = Path(staging) / str(lib).lstrip("/")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(lib, target)  # the file a link names, under the name the loader asks for
                return [self.layout.add_tree([(prefix, str(prefix)), (Path(staging), "")])]
        return self._once(f"python {prefix}", make)

    def write(self, task: Task) -> str:
        """``task``'s image (built first where missing); returns its tag."""
        built = self.builder.instance(task)
        base, tree = self._base()
        layers = [*base, *self._interpreter(built.env, tree),
                  *self._once(f"env {built.env.key}", lambda: [self.layout.add_tree([(built.env.venv, VENV)])]),
                  *self._once(f"tree {built.tree}", lambda: [self.layout.add_tree([(built.tree, WORKDIR)])]),
                  self.layout.add_tree([(built.testbed, WORKDIR), (built.venv, VENV)])]
        config = {"Env": [f"PATH={PATH}", f"VIRTUAL_ENV={VENV}", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"],
                  "WorkingDir": WORKDIR, "Labels": {"org.sweworld.instance_id": task.instance_id,
                                                    "org.sweworld.base_commit": task.base_commit}}
        tag = image_tag(task)
        self.layout.add_image(tag, layers, config)
        return tag


def image_row(task: Task, builder: Any, reference: str) -> dict[str, Any]:
    """``task``'s SWE-rebench row (no frozen requirements: the image is the environment) on ``reference``."""
    row = to_row(task, install_config(task, builder.recipe(task)))
    row["meta"] = meta(task)
    row["docker_image"] = row["image_name"] = reference
    return row


def export_images(tasks: Iterable[Task], layout: Path, out: Path, builder: Any) -> ImagesSummary:
    """Each of ``tasks`` as an image in ``layout`` and a row in ``out`` (JSONL); a task that fails is
    reported and skipped, the others are written."""
    summary = ImagesSummary()
    writer = ImageWriter(layout, builder)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as handle:
        for task in tasks:
            try:
                tag = writer.write(task)
                row = image_row(task, builder, f"oci:{layout.resolve()}:{tag}")
            except (SWEWorldError, OSError, subprocess.CalledProcessError) as exc:
                summary.failed[task.instance_id] = str(exc).splitlines()[0]
                log.warning("%s: no image: %s", task.instance_id, exc)
                continue
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            summary.rows += 1
            summary.images[tag] = row["docker_image"]
    return summary
