"""swebench specs and the translation of conda-based steps (real swebench package, real files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sweworld.envs import swebench_specs as sbs


def test_spec_for_known_and_unknown() -> None:
    spec = sbs.spec_for("psf/requests", "2.0")
    assert spec is not None and spec["python"] == "3.9" and "install" in spec
    spec["python"] = "changed"  # a copy: the package's table is untouched
    assert sbs.spec_for("psf/requests", "2.0")["python"] == "3.9"
    assert sbs.spec_for("psf/requests", "99.9") is None
    assert sbs.spec_for("nobody/nothing", "1.0") is None
    assert sbs.spec_for("astropy/astropy", "5.3") is not None  # stored as 'v5.3'
    assert sbs.reqs_paths("django/django") == ["tests/requirements/py3.txt"]
    assert "environment.yml" in sbs.env_yml_paths("pydata/xarray")


@pytest.mark.parametrize(("conda", "pip", "noted"), [
    ("numpy", "numpy", False), ("numpy=1.21", "numpy==1.21", False),
    ("numpy=1.21=py39h_0", "numpy==1.21", False), ("numpy 1.21", "numpy==1.21", False),
    ("pandas<2.0.0", "pandas<2.0.0", False), ("dask-core", "dask", True),
    ("matplotlib-base>=3.5", "matplotlib>=3.5", True), ("conda-forge::pytables", "tables", True),
    ("libcst", "libcst", False), ("python=3.9", None, True), ("pip", None, True), ("hdf5", None, True),
    ("libnetcdf", None, True), ("gxx_linux-64", None, True), ("numpy 1.2|1.3", "numpy", True),
])
def test_conda_to_pip(conda: str, pip: str | None, noted: bool) -> None:
    req, note = sbs.conda_to_pip(conda)
    assert req == pip
    assert bool(note) is noted


def test_requirements_inline_includes_and_drop_self_installs(tmp_path: Path) -> None:
    (tmp_path / "reqs").mkdir()
    (tmp_path / "reqs" / "base.txt").write_text("six==1.16.0\n")
    (tmp_path / "reqs" / "dev.txt").write_text(
        "# comment\n-r base.txt\n-e .\nattrs>=21  # inline\ntypes-pkg_resources==0.1\n-c constraints.txt\n")
    notes: list[str] = []
    reqs = sbs.read_requirements(tmp_path / "reqs" / "dev.txt", tmp_path, notes)
    assert reqs == ["six==1.16.0", "attrs>=21", "types-setuptools"]
    joined = "\n".join(notes)
    assert "-e ." in joined and "types-pkg_resources" in joined and "constraint" in joined


def test_environment_yml_pip_section_and_conda_deps(tmp_path: Path) -> None:
    yml = tmp_path / "environment.yml"
    yml.write_text("name: xr\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.10\n  - numpy\n"
                   "  - dask-core\n  - hdf5\n  - pip\n  - pip:\n      - numbagg==0.2\n      - -e .\n")
    notes: list[str] = []
    pip_reqs, conda_reqs = sbs.read_environment_yml(yml, tmp_path, notes)
    assert pip_reqs == ["numbagg==0.2"]
    assert conda_reqs == ["numpy", "dask"]
    assert any("hdf5" in n for n in notes) and any("channels" in n for n in notes)


@pytest.mark.parametrize(("command", "dropped"), [
    ("apt-get update && apt-get install -y graphviz", True),
    ("echo 'en_US UTF-8' > /etc/locale.gen", True),
    ("sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen", True),
    ("source activate testbed", True), ("conda install -y numpy", True),
    ("sed -i 's/pytest/pytest -rA/' tox.ini", False),
    ('wget -O "$QHULL_TAR" "$QHULL_URL"', False), ("export LANG=en_US.UTF-8", False),
])
def test_system_commands_are_recognised(command: str, dropped: bool) -> None:
    assert sbs.needs_root_or_conda(command) is dropped


def test_split_exports() -> None:
    env: dict[str, str] = {}
    kept = sbs.split_exports(["export LANG=en_US.UTF-8", "export X='a b'", "export P=$HOME/x", "ls"], env)
    assert env == {"LANG": "en_US.UTF-8", "X": "a b"}
    assert kept == ["export P=$HOME/x", "ls"]
