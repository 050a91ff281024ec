"""Three real instance images made here without a daemon and without root, for "every dataset's
container image as an environment": each holds a real repository with its own tests at ``/testbed``
(a git repository at the instance's base commit, ``git status`` clean), and comes with the dataset
row of one instance on it.

- ``python_image()``: laid out as a SWE-bench instance image of ``psf__requests-90001``
  (``tests/swebench_shaped.py``): Debian's python3 (3.11) with pytest and requests' dependencies, a
  conda-like shim so that ``source /opt/miniconda3/bin/activate && conda activate testbed`` works, a
  hand-made venv ``/opt/miniconda3/envs/testbed`` (system site-packages visible) holding requests
  installed non-editable, and an ``/etc/pip.conf`` that makes SWE-bench's ``python -m pip install .``
  work offline; the row has SWE-bench Verified's schema;
- ``go_image()``: Debian's Go 1.19 toolchain and go-cmp 0.5.9 (from Debian's
  ``golang-github-google-go-cmp-dev``, tests included) with a bug injected in
  ``cmp/internal/value/sort.go``; the row in SWE-rebench-V2's style (``install_config`` with
  ``test_cmd`` and ``log_parser`` ``parse_log_gotest``);
- ``js_image()``: Debian's nodejs 18 and ``@fastify/accept-negotiator`` 2.1.2 from the npm registry
  (its tests use ``node:test``; their one dev dependency, ``@matteo.collina/tspl``, has none), with a
  bug injected in ``index.js``; tests run with ``node --test --test-reporter=tap``, parsed by
  ``parse_log_tap``.

Layers: a base shared by the three (libc, bash, busybox, git, patch and their libraries), a language
layer, a repository layer. Debian packages come with their dependencies resolved by ``closure``
(``apt-cache depends``, heavy packages an image does not need left out) and are unpacked by
``oci_images.debian_rootfs``. Every image is built once and cached under
``$SWEWORLD_HOME/test-images/`` keyed by its content (this file's text and the inputs), built under
a lock so that parallel workers wait for the first. Commits are made with a fixed author and date,
so the ids are stable.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from oci_images import Entry, _home, debian_rootfs, layer, write_layout

#: kept out of every closure: an image runs no maintainer scripts, and git's porcelain in C is enough
EXCLUDED = frozenset({
    "perl", "perl-base", "perl-modules-5.36", "libperl5.36", "liberror-perl", "debconf", "cdebconf",
    "libdebian-installer4", "libnewt0.52", "libslang2", "libtextwrap1", "dpkg", "install-info", "gawk",
    "original-awk", "mawk", "git-man", "ca-certificates", "openssl", "tar", "libgdbm-compat4", "libgdbm6",
    "libdb5.3", "libsigsegv2", "libmpfr6", "libgmp10", "readline-common", "libreadline8",
    # node-tape & co. are not used: the JavaScript image runs node's own test runner
})
BASE_ROOTS = ("libc6", "libc-bin", "libtinfo6", "bash", "busybox-static", "git", "patch")  # libc-bin: the C.UTF-8 locale
PYTHON_ROOTS = ("python3", "python3-pytest", "python3-urllib3", "python3-idna", "python3-charset-normalizer",
                "python3-certifi", "python3-pip", "python3-setuptools", "python3-wheel")
GO_ROOTS = ("golang-1.19-go", "golang-1.19-src", "golang-github-google-go-cmp-dev")
JS_ROOTS = ("nodejs",)
#: apt as if nothing were installed here: the candidates are the archive's, not what this machine has
APT_FRESH = ("-o", "Dir::State::status=/dev/null")
FIXED = {"GIT_AUTHOR_NAME": "sweworld", "GIT_AUTHOR_EMAIL": "sweworld@localhost",
         "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000", "GIT_COMMITTER_NAME": "sweworld",
         "GIT_COMMITTER_EMAIL": "sweworld@localhost", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
         "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class LangImage:
    """One built image: the OCI layout ``layout`` holding it as ``tag``; ``name`` what it is pushed
    as (``repo:tag``); ``config`` its image config (``Env``, ``WorkingDir``); ``row`` the dataset row
    of its instance; ``layer_sizes`` its compressed layer sizes, bottom first."""

    layout: Path
    tag: str
    name: str
    config: dict
    row: dict
    layer_sizes: tuple[int, ...]

    @property
    def reference(self) -> str:
        """The image as ``sweworld.oci.pull.pull`` and skopeo name it: ``oci:DIR:TAG``."""
        return f"oci:{self.layout}:{self.tag}"


# ---------------------------------------------------------------------------------------------
# Debian packages


def closure(packages: tuple[str, ...], exclude: frozenset[str] = EXCLUDED) -> tuple[str, ...]:
    """``packages`` and what they depend on (Depends and Pre-Depends, recursively), sorted; virtual
    packages dropped (a real one in the closure provides them) and ``exclude`` not followed."""
    got = subprocess.run(["apt-cache", *APT_FRESH, "depends", "--recurse", "--no-recommends", "--no-suggests",
                          "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", "--important",
                          *packages], capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"apt-cache depends {' '.join(packages)} failed: {got.stderr.strip()[-300:]}")
    graph: dict[str, set[str]] = {}
    current = None
    for line in got.stdout.splitlines():
        if not line.startswith(" "):
            current = line.strip()
            graph.setdefault(current, set())
        elif current and (found := re.match(r"^\s+\|?(?:Pre)?Depends: (\S+)$", line)):
            graph[current].add(found.group(1))
    wanted, todo = set(), list(packages)
    while todo:
        name = todo.pop()
        if name in wanted or name in exclude or name.startswith("<"):
            continue
        wanted.add(name.split(":")[0])
        todo.extend(graph.get(name, ()))
    return tuple(sorted(wanted))


def rootfs(packages: tuple[str, ...]) -> Path:
    """``debian_rootfs`` of ``packages``, the archive's own versions fetched first (so a newer
    package installed on this machine from elsewhere, such as nodesource's nodejs, plays no part)."""
    root = _home() / "test-images"
    debs = root / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = [p for p in packages if not list(debs.glob(f"{p}_*.deb"))]
        if missing:
            got = subprocess.run(["apt-get", *APT_FRESH, "download", *missing], cwd=debs, capture_output=True,
                                 text=True)
            if got.returncode != 0:
                pytest.skip(f"apt-get download failed: {got.stderr.strip()[-300:]}")
    return debian_rootfs(packages)


def _difference(full: Path, base: Path, into: Path) -> Path:
    """``into`` holding what ``full`` has and ``base`` has not (hard links, so no bytes are copied;
    directories kept so that modes come along)."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    for folder, dirs, files in os.walk(full):
        rel = Path(folder).relative_to(full)
        for name in dirs:
            path = full / rel / name
            if path.is_symlink():
                files.append(name)
            else:
                (into / rel / name).mkdir(mode=path.stat().st_mode & 0o7777, exist_ok=True)
        for name in files:
            path, other = full / rel / name, base / rel / name
            if path.is_symlink():
                if other.is_symlink() and os.readlink(other) == os.readlink(path):
                    continue
                os.symlink(os.readlink(path), into / rel / name)
            else:
                if other.is_file() and not other.is_symlink() and other.stat().st_ino == path.stat().st_ino:
                    continue
                if other.is_file() and not other.is_symlink() and other.read_bytes() == path.read_bytes():
                    continue
                os.link(path, into / rel / name)
    return into


# ---------------------------------------------------------------------------------------------
# git


def _git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **FIXED}, input=stdin, check=True,
                          capture_output=True, text=True).stdout.strip()


def _commit_all(repo: Path, message: str) -> str:
    _git(repo, "add", "-f", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _new_repo(tree: Path, message: str) -> str:
    """``tree`` made a git repository (branch ``main``) with one commit of all its files."""
    _git(tree, "init", "-q", "-b", "main")
    (tree / ".git" / "info").mkdir(exist_ok=True)
    (tree / ".git" / "info" / "attributes").write_text("* -text -eol -filter -ident -working-tree-encoding\n")
    return _commit_all(tree, message)


def _inject(repo: Path, path: str, good: str, bad: str, message: str) -> tuple[str, str]:
    """Commit ``path`` with ``good`` replaced by ``bad``; returns (the commit, the gold patch: its reverse)."""
    text = (repo / path).read_text()
    assert text.count(good) == 1, (path, good)
    (repo / path).write_text(text.replace(good, bad))
    commit = _commit_all(repo, message)
    return commit, _git(repo, "diff", commit, f"{commit}~1") + "\n"


# ---------------------------------------------------------------------------------------------
# building and caching


#: raise it when the way an image is built changes (its inputs are keyed by themselves)
BUILD_VERSION = 1


def _key(*parts) -> str:
    """A key of an image's content: the build's version, the base's and the image's inputs."""
    text = json.dumps([BUILD_VERSION, BASE_ROOTS, sorted(EXCLUDED), PATH, *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cached(name: str, key: str, build) -> LangImage:
    """The image ``name`` of content ``key``: read from the cache, or made by ``build(layout)``
    (returning ``(name, config, row)``) under a lock, then recorded."""
    root = _home() / "test-images"
    root.mkdir(parents=True, exist_ok=True)
    layout = root / f"{name}-{key}"
    record = layout / "sweworld-image.json"
    with open(root / ".lang-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.is_file():
            shutil.rmtree(layout, ignore_errors=True)
            image_name, config, row, tars = build(root / f"{name}-work")
            write_layout(layout, "latest", tars, config)
            index = json.loads((layout / "index.json").read_text())
            manifest = json.loads((layout / "blobs" / "sha256" / index["manifests"][0]["digest"][7:]).read_text())
            sizes = [m["size"] for m in manifest["layers"]]
            record.write_text(json.dumps({"name": image_name, "config": config, "row": row, "sizes": sizes}))
            shutil.rmtree(root / f"{name}-work", ignore_errors=True)
    saved = json.loads(record.read_text())
    return LangImage(layout, "latest", saved["name"], saved["config"], saved["row"], tuple(saved["sizes"]))


def _base() -> tuple[tuple[str, ...], Path]:
    packages = closure(BASE_ROOTS)
    return packages, rootfs(packages)


def _language_layer(base_packages, base_root: Path, roots: tuple[str, ...], work: Path,
                    entries: list[Entry]) -> tuple[Path, bytes]:
    full = rootfs(tuple(sorted(set(base_packages) | set(closure(roots)))))
    return full, layer(_difference(full, base_root, work / "lang"), entries)


def _repo_layer(work: Path, repo: Path, entries: list[Entry] = ()) -> bytes:
    """A layer of ``/testbed`` (``repo``, .git included) and ``entries``."""
    tree = work / "repo-layer"
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    shutil.move(repo, tree / "testbed")
    return layer(tree, list(entries))


def _script(name: str, text: str) -> Entry:
    return Entry(name, data=text.encode(), mode=0o755)


def _dirs(*names: str) -> list[Entry]:
    return [Entry(n, "dir", mode=0o755) for n in names]


def _json_lists(row: dict) -> dict:
    return {**row, "FAIL_TO_PASS": json.dumps(row["FAIL_TO_PASS"]), "PASS_TO_PASS": json.dumps(row["PASS_TO_PASS"])}


# ---------------------------------------------------------------------------------------------
# Python: a SWE-bench instance image of psf__requests-90001

CONDA = "/opt/miniconda3"
TESTBED_ENV = f"{CONDA}/envs/testbed"
PY_SITE = "lib/python3.11/site-packages"
CONDA_ACTIVATE = f"""\
# A conda-like shim: `source {CONDA}/bin/activate && conda activate NAME` activates the venv
# {CONDA}/envs/NAME; `conda deactivate` leaves it.
export CONDA_PREFIX={CONDA} CONDA_DEFAULT_ENV=base CONDA_SHLVL=1
case ":$PATH:" in *":{CONDA}/bin:"*) ;; *) export PATH="{CONDA}/bin:$PATH" ;; esac
conda() {{
    case "$1" in
        activate)
            if [ -z "$2" ] || [ "$2" = base ]; then return 0; fi
            if [ ! -f "{CONDA}/envs/$2/bin/activate" ]; then
                echo "EnvironmentNameNotFound: Could not find conda environment: $2" >&2; return 1
            fi
            . "{CONDA}/envs/$2/bin/activate"
            export CONDA_PREFIX="{CONDA}/envs/$2" CONDA_DEFAULT_ENV="$2" CONDA_SHLVL=2 ;;
        deactivate)
            if command -v deactivate >/dev/null 2>&1; then deactivate; fi
            export CONDA_PREFIX={CONDA} CONDA_DEFAULT_ENV=base CONDA_SHLVL=1 ;;
        *) echo "conda (shim): only 'activate' and 'deactivate' are known" >&2; return 1 ;;
    esac
}}
"""
VENV_ACTIVATE = f"""\
# This file must be used with "source bin/activate" from bash.
deactivate () {{
    if [ -n "${{_OLD_VIRTUAL_PATH:-}}" ]; then PATH="$_OLD_VIRTUAL_PATH"; export PATH; unset _OLD_VIRTUAL_PATH; fi
    hash -r 2>/dev/null
    unset VIRTUAL_ENV VIRTUAL_ENV_PROMPT
    if [ "${{1:-}}" != nondestructive ]; then unset -f deactivate; fi
}}
deactivate nondestructive
VIRTUAL_ENV="{TESTBED_ENV}"
export VIRTUAL_ENV
_OLD_VIRTUAL_PATH="$PATH"
PATH="$VIRTUAL_ENV/bin:$PATH"
export PATH
VIRTUAL_ENV_PROMPT="(testbed) "
export VIRTUAL_ENV_PROMPT
hash -r 2>/dev/null
"""
# pip reads a boolean option's config value with strtobool and stores it in the option's dest: the
# dest of --no-build-isolation is build_isolation, so "no-build-isolation = false" turns isolation
# off (pip's documented quirk: https://pip.pypa.io/en/stable/user_guide/#config-file).
PIP_CONF = "[global]\nno-index = true\ndisable-pip-version-check = true\n\n[install]\nno-build-isolation = false\n"


def _entry_point(module: str, call: str) -> str:
    return f"#!{TESTBED_ENV}/bin/python\nimport sys\nfrom {module} import {call}\nsys.exit({call}())\n"


def _installed_copy(repo: Path, version: str) -> list[Entry]:
    """requests installed into the testbed venv as ``pip install .`` (non-editable) leaves it: the
    package copied into site-packages with a ``.dist-info`` whose RECORD lets pip uninstall it."""
    site = f"{TESTBED_ENV}/{PY_SITE}".lstrip("/")
    entries, record = [], []
    for path in sorted((repo / "requests").rglob("*.py")):
        rel = path.relative_to(repo).as_posix()
        data = path.read_bytes()
        entries.append(Entry(f"{site}/{rel}", data=data))
        record.append(f"{rel},sha256={_urlsafe(data)},{len(data)}")
    info = f"requests-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: requests\nVersion: {version}\nSummary: Python HTTP for Humans.\n"
                "Requires-Python: >=3.7\nRequires-Dist: charset-normalizer (<4,>=2)\nRequires-Dist: idna (<4,>=2.5)\n"
                "Requires-Dist: urllib3 (<3,>=1.21.1)\nRequires-Dist: certifi (>=2017.4.17)\n")
    files = {"METADATA": metadata, "INSTALLER": "pip\n", "top_level.txt": "requests\n",
             "WHEEL": "Wheel-Version: 1.0\nGenerator: sweworld\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    for name, text in files.items():
        entries.append(Entry(f"{site}/{info}/{name}", data=text.encode()))
        record.append(f"{info}/{name},sha256={_urlsafe(text.encode())},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    entries.append(Entry(f"{site}/{info}/RECORD", data=("\n".join(record) + "\n").encode()))
    return [*_dirs(f"{site}/requests", f"{site}/{info}"), *entries]


def _urlsafe(data: bytes) -> str:
    import base64
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def python_image() -> LangImage:
    """``swebench/sweb.eval.x86_64.psf_1776_requests-90001:latest`` and its SWE-bench Verified row."""
    from swebench_shaped import IMAGE, requests_task
    from sweworld.repos import pypi_repo

    task = requests_task()
    mirror, _release = pypi_repo("requests", "2.31.0")

    def build(work: Path):
        base_packages, base_root = _base()
        env_dirs = _dirs("opt", CONDA[1:], f"{CONDA[1:]}/bin", f"{CONDA[1:]}/envs", TESTBED_ENV[1:],
                         f"{TESTBED_ENV[1:]}/bin", f"{TESTBED_ENV[1:]}/lib", f"{TESTBED_ENV[1:]}/lib/python3.11",
                         f"{TESTBED_ENV[1:]}/{PY_SITE}")
        venv = [
            Entry(f"{TESTBED_ENV[1:]}/pyvenv.cfg",
                  data=b"home = /usr/bin\ninclude-system-site-packages = true\nversion = 3.11.2\n"),
            Entry(f"{TESTBED_ENV[1:]}/bin/python", "symlink", link="/usr/bin/python3"),
            Entry(f"{TESTBED_ENV[1:]}/bin/python3", "symlink", link="python"),
            Entry(f"{TESTBED_ENV[1:]}/bin/python3.11", "symlink", link="python"),
            Entry(f"{TESTBED_ENV[1:]}/bin/activate", data=VENV_ACTIVATE.encode()),
            _script(f"{TESTBED_ENV[1:]}/bin/pip", _entry_point("pip._internal.cli.main", "main")),
            _script(f"{TESTBED_ENV[1:]}/bin/pytest", _entry_point("pytest", "console_main")),
            Entry(f"{TESTBED_ENV[1:]}/lib64", "symlink", link="lib"),
            Entry(f"{CONDA[1:]}/bin/activate", data=CONDA_ACTIVATE.encode()),
            Entry("etc/pip.conf", data=PIP_CONF.encode()),
        ]
        _full, lang = _language_layer(base_packages, base_root, PYTHON_ROOTS, work, [*env_dirs, *venv])
        repo = work / "testbed"
        shutil.rmtree(repo, ignore_errors=True)
        repo.mkdir(parents=True)
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "fetch", "-q", str(mirror), f"refs/sweworld/commits/{task.base_commit}")
        _git(repo, "checkout", "-q", "-B", "main", task.base_commit)
        top = _repo_layer(work, repo, [*_dirs("root"), *_installed_copy(repo, "2.31.0")])
        config = {"Env": [f"PATH={CONDA}/bin:{PATH}", "LANG=C.UTF-8", "HOME=/root"], "WorkingDir": "/testbed",
                  "Cmd": ["/bin/bash"]}
        row = _json_lists({
            "instance_id": task.instance_id, "repo": task.repo, "version": task.version,
            "base_commit": task.base_commit, "environment_setup_commit": task.environment_setup_commit,
            "patch": task.patch, "test_patch": task.test_patch, "problem_statement": task.problem_statement,
            "hints_text": "", "created_at": task.created_at, "FAIL_TO_PASS": task.FAIL_TO_PASS,
            "PASS_TO_PASS": task.PASS_TO_PASS, "difficulty": "<15 min fix"})
        return IMAGE, config, row, [layer(base_root), lang, top]

    key = _key(PYTHON_ROOTS, task.base_commit, task.patch, task.test_patch, CONDA_ACTIVATE, VENV_ACTIVATE, PIP_CONF)
    return _cached("python-requests", key, build)


# ---------------------------------------------------------------------------------------------
# Go: go-cmp 0.5.9 with a bug in cmp/internal/value

GO_ID = "google__go-cmp-90001"
GO_IMAGE = "sweworld/sweb.eval.x86_64.google_1776_go-cmp-90001:latest"
GO_SOURCE = "usr/share/gocode/src/github.com/google/go-cmp"
GO_FILE = "cmp/internal/value/sort.go"
GO_GOOD = "\tcase reflect.Bool:\n\t\treturn !x.Bool() && y.Bool()\n"
GO_BAD = "\tcase reflect.Bool:\n\t\treturn x.Bool() && !y.Bool()\n"
GO_TEST_CMD = "go test -v ./cmp/internal/value ./cmp/internal/function"
GO_F2P = ["TestSortKeys"]
GO_P2P = ["TestTypeString", "TestNameOf", "TestNameOf/#00", "TestNameOf/#15"]
GO_ENV = [f"PATH=/usr/lib/go-1.19/bin:{PATH}", "HOME=/root", "GOPATH=/root/go", "GOCACHE=/root/.cache/go-build",
          "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local", "GOTELEMETRY=off"]


def go_image() -> LangImage:
    """go-cmp at ``/testbed`` with ``SortKeys`` ordering booleans backwards; its SWE-rebench-V2-style row."""

    def build(work: Path):
        base_packages, base_root = _base()
        links = [Entry("usr/bin/go", "symlink", link="../lib/go-1.19/bin/go"),
                 Entry("usr/bin/gofmt", "symlink", link="../lib/go-1.19/bin/gofmt")]
        full, lang = _language_layer(base_packages, base_root, GO_ROOTS, work, links)
        repo = work / "testbed"
        shutil.rmtree(repo, ignore_errors=True)
        shutil.copytree(full / GO_SOURCE, repo, symlinks=True)
        release = _new_repo(repo, "go-cmp 0.5.9 (Debian golang-github-google-go-cmp-dev 0.5.9-1)")
        base, gold = _inject(repo, GO_FILE, GO_GOOD, GO_BAD, f"sweworld: {GO_ID}")
        top = _repo_layer(work, repo, _dirs("root"))
        config = {"Env": GO_ENV, "WorkingDir": "/testbed", "Cmd": ["/bin/bash"]}
        row = _json_lists({
            "instance_id": GO_ID, "repo": "google/go-cmp", "version": "0.5.9", "language": "go",
            "base_commit": base, "environment_setup_commit": release, "patch": gold, "test_patch": "",
            "problem_statement": "cmp.Diff reports map[bool]T keys out of order: value.SortKeys sorts true "
                                 "before false, while false < true is the documented order.",
            "hints_text": "", "created_at": "2022-08-31T00:00:00Z", "FAIL_TO_PASS": GO_F2P, "PASS_TO_PASS": GO_P2P,
            "install_config": {"test_cmd": GO_TEST_CMD, "log_parser": "parse_log_gotest"},
            "image_name": GO_IMAGE})
        return GO_IMAGE, config, row, [layer(base_root), lang, top]

    return _cached("go-cmp", _key(GO_ROOTS, GO_ENV, GO_GOOD, GO_BAD, GO_TEST_CMD, GO_F2P, GO_P2P), build)


# ---------------------------------------------------------------------------------------------
# JavaScript: @fastify/accept-negotiator 2.1.2 with a bug in negotiate()

JS_ID = "fastify__accept-negotiator-90001"
JS_IMAGE = "sweworld/sweb.eval.x86_64.fastify_1776_accept-negotiator-90001:latest"
JS_PACKAGE, JS_VERSION = "@fastify/accept-negotiator", "2.1.2"
JS_DEV = ("@matteo.collina/tspl", "0.2.0")
JS_FILE = "index.js"
JS_GOOD = "    } else if (preferredEncodingPriority > priority) {\n"
JS_BAD = "    } else if (preferredEncodingPriority < priority) {\n"
JS_TESTS = "test/negotiate.test.js test/Negotiator.test.js"
JS_TEST_CMD = f"node --test --test-reporter=tap {JS_TESTS}"
JS_F2P = ["- should return gzip when deflate;q=0.5, gzip;q=0.5 and gzip,deflate",
          "- should return deflate when deflate;q=0.5, gzip;q=0.5 and deflate,gzip"]
JS_P2P = ["- should create Negotiator-Instances", "- should return gzip when gzip, , identity and deflate,gzip",
          "- should return identity when identity;q=1 and gzip,identity",
          "- should return deflate when deflate;q=0.5,identity; q=0.5 and gzip,deflate"]


def npm_tarball(name: str, version: str) -> Path:
    """``npm pack NAME@VERSION``, cached under ``$SWEWORLD_HOME/test-images/npm`` (skips without npm or
    the registry)."""
    folder = _home() / "test-images" / "npm"
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
    if not file.is_file():
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: it fetches the JavaScript package")
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            got = subprocess.run(["npm", "pack", "--silent", f"{name}@{version}"], cwd=tmp, capture_output=True,
                                 text=True, env={**os.environ, "npm_config_cache": str(Path(tmp) / "cache")})
            if got.returncode != 0:
                pytest.skip(f"npm pack {name}@{version} failed: {got.stderr.strip()[-300:]}")
            os.replace(Path(tmp) / file.name, file)
    return file


def _unpack_npm(tarball: Path, into: Path) -> None:
    """An npm tarball's ``package/`` as ``into`` (regular files and folders only)."""
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            name = member.name.split("/", 1)[1] if "/" in member.name else ""
            if not name or ".." in Path(name).parts or not (member.isfile() or member.isdir()):
                continue
            target = into / name
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
            target.chmod(0o755 if member.mode & 0o111 else 0o644)


def js_image() -> LangImage:
    """@fastify/accept-negotiator at ``/testbed`` breaking ties between equal qualities the wrong way;
    its SWE-rebench-V2-style row."""
    package = npm_tarball(JS_PACKAGE, JS_VERSION)
    dev = npm_tarball(*JS_DEV)

    def build(work: Path):
        base_packages, base_root = _base()
        _full, lang = _language_layer(base_packages, base_root, JS_ROOTS, work, [])
        repo = work / "testbed"
        shutil.rmtree(repo, ignore_errors=True)
        _unpack_npm(package, repo)
        release = _new_repo(repo, f"{JS_PACKAGE} {JS_VERSION} (npm)")
        base, gold = _inject(repo, JS_FILE, JS_GOOD, JS_BAD, f"sweworld: {JS_ID}")
        # its dev dependency installed as npm would, kept out of git's sight
        _unpack_npm(dev, repo / "node_modules" / JS_DEV[0])
        (repo / ".git" / "info" / "exclude").write_text("node_modules\n")
        top = _repo_layer(work, repo, _dirs("root"))
        config = {"Env": [f"PATH={PATH}", "HOME=/root", "NODE_ENV=test"], "WorkingDir": "/testbed",
                  "Cmd": ["/bin/bash"]}
        row = _json_lists({
            "instance_id": JS_ID, "repo": "fastify/accept-negotiator", "version": JS_VERSION,
            "language": "javascript", "base_commit": base, "environment_setup_commit": release, "patch": gold,
            "test_patch": "", "problem_statement": "negotiate() breaks ties between encodings of equal "
            "quality the wrong way: it should prefer the one listed first in supportedValues.",
            "hints_text": "", "created_at": "2024-01-01T00:00:00Z", "FAIL_TO_PASS": JS_F2P,
            "PASS_TO_PASS": JS_P2P, "install_config": {"test_cmd": JS_TEST_CMD, "log_parser": "parse_log_tap"},
            "image_name": JS_IMAGE})
        return JS_IMAGE, config, row, [layer(base_root), lang, top]

    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (package, dev)]
    key = _key(JS_ROOTS, digests, JS_GOOD, JS_BAD, JS_TEST_CMD, JS_F2P, JS_P2P)
    return _cached("js-accept-negotiator", key, build)
