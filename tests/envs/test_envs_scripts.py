"""Env and instance scripts run for real with bash on a tiny package written in tmp_path.

The tiny packages carry their own PEP 517 backend (no setuptools, no build requirements), so the
offline builds need no package index at all.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sweworld.core.errors import EnvBuildError
from sweworld.core.types import Task
from sweworld.envs.discovery import find_interpreter
from sweworld.envs.recipe import EnvRecipe, resolve_recipe
from sweworld.envs.scripts import env_stage_script, instance_stage_script
from sweworld.envs.shell import command_segments

BACKEND = '''
import base64, hashlib, json, os, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CFG = json.loads((ROOT / "backend.json").read_text())
DIST = f"{CFG['name']}-1.0"


def _line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _wheel(directory, files):
    meta = ["Metadata-Version: 2.1", f"Name: {CFG['name']}", "Version: 1.0"]
    for extra, reqs in CFG.get("extras", {}).items():
        meta.append(f"Provides-Extra: {extra}")
        meta += [f'Requires-Dist: {r} ; extra == "{extra}"' for r in reqs]
    files[f"{DIST}.dist-info/METADATA"] = ("\\n".join(meta) + "\\n").encode()
    files[f"{DIST}.dist-info/WHEEL"] = b"Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = [_line(n, d) for n, d in files.items()] + [f"{DIST}.dist-info/RECORD,,"]
    files[f"{DIST}.dist-info/RECORD"] = ("\\n".join(record) + "\\n").encode()
    name = f"{DIST}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    pkg = ROOT / CFG["name"]
    return _wheel(wheel_directory, {f"{CFG['name']}/{p.name}": p.read_bytes() for p in pkg.glob("*.py")})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {f"_{CFG['name']}_editable.pth": (str(ROOT) + "\\n").encode()})
'''


def write_package(root: Path, name: str, extras: dict[str, list[str]] | None = None) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text(f"NAME = {name!r}\n")
    (root / "_backend").mkdir()
    (root / "_backend" / "backend.py").write_text(BACKEND)
    (root / "backend.json").write_text(json.dumps({"name": name, "extras": extras or {}}))
    optional = "".join(f'{k} = {json.dumps(v)}\n' for k, v in (extras or {}).items())
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["_backend"]\n\n'
        f'[project]\nname = "{name}"\nversion = "1.0"\nrequires-python = ">=3.8"\n\n'
        f'[project.optional-dependencies]\n{optional}')
    return root


def bash(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    dep = write_package(tmp_path / "tinydep", "tinydep")
    tree = write_package(tmp_path / "tree", "tinypkg", {"test": [f"tinydep @ {dep.as_uri()}"], "docs": ["nope"]})
    return tree, dep


def test_default_recipe_builds_offline_with_venv(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    tree, _dep = tiny
    recipe = resolve_recipe(Task(instance_id="t-1", repo="local/tiny", base_commit="c", python="3.11"), tree)
    assert recipe.install_extras == ["test"] and recipe.install_repo_in_env
    # offline: pytest (the default's extra package) cannot come from an index; a missing optional
    # requirement is skipped, a local one is installed.
    recipe = recipe.model_copy(update={"packages": [], "optional_packages": ["nonexistent-pkg-sweworld==9"],
                                       "pre_install": ["python -c 'import sys; print(sys.prefix)' > prefix.txt"]})
    venv = tmp_path / "venv"
    python = find_interpreter("3.11").path
    env = bash(env_stage_script(recipe, python=python, venv=str(venv), uv=None, workdir=str(tree),
                                offline=True), tmp_path)
    assert env.returncode == 0, env.stderr[-3000:]
    assert "skipped optional requirement nonexistent-pkg-sweworld==9" in env.stderr
    check = "import tinypkg, tinydep, sys; print(tinypkg.NAME, tinydep.NAME, sys.version_info[:2])"
    out = subprocess.run([str(venv / "bin" / "python"), "-c", check], capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "tinypkg tinydep (3, 11)", out.stderr

    inst = bash(instance_stage_script(recipe, venv=str(venv), uv=None, workdir=str(tree), offline=True), tmp_path)
    assert inst.returncode == 0, inst.stderr[-3000:]
    assert "--no-deps -e ." in inst.stderr  # set -x trace of the install
    assert Path((tree / "prefix.txt").read_text().strip()).resolve() == venv.resolve()


def test_missing_requirements_file_fails_the_build(tmp_path: Path) -> None:
    recipe = EnvRecipe(python="3.11", requirements_files=["reqs/a.txt", "reqs/b.txt"])
    script = env_stage_script(recipe, python=find_interpreter("3.11").path, venv=str(tmp_path / "v"),
                              workdir=str(tmp_path), offline=True)
    result = bash(script, tmp_path)
    assert result.returncode != 0 and "none of reqs/a.txt reqs/b.txt exists" in result.stderr


def test_instance_stage_needs_the_venv(tmp_path: Path) -> None:
    script = instance_stage_script(EnvRecipe(install="true"), venv=str(tmp_path / "absent"), workdir=str(tmp_path))
    result = bash(script, tmp_path)
    assert result.returncode == 1 and "no virtualenv" in result.stderr


def test_uv_is_used_from_3_8_and_python2_is_refused(tmp_path: Path) -> None:
    uv = Path("/bin/uv")
    recipe = EnvRecipe(python="3.9", packages=["six"], pip_packages=["attrs==23.1.0", "a b"])
    script = env_stage_script(recipe, python=Path("/py/bin/python3.9"), uv=uv)
    assert "/bin/uv venv --seed --python /py/bin/python3.9 /sweworld/venv" in script
    assert "/bin/uv pip install --python /sweworld/venv/bin/python attrs==23.1.0 'a b'" in script
    assert script.startswith("#!/usr/bin/env bash") and "set -euxo pipefail" in script
    assert "cd /testbed" in script and "export UV_LINK_MODE=copy" in script
    old = env_stage_script(recipe.model_copy(update={"python": "3.7"}), python=Path("/py/bin/python3.7"), uv=uv)
    assert "/py/bin/python3.7 -m venv /sweworld/venv" in old and "uv pip" not in old
    assert "/sweworld/venv/bin/python -m pip install --upgrade pip setuptools wheel" in old
    with pytest.raises(EnvBuildError, match="not supported"):
        env_stage_script(recipe.model_copy(update={"python": "2.7"}), python=Path("/py/bin/python2.7"), uv=uv)
    inst = instance_stage_script(recipe.model_copy(update={"install": "python -m pip install -e ."}), uv=uv)
    assert inst.index('export PATH=/sweworld/venv/bin:/bin:"$PATH"') < inst.index("python -m pip install -e .")


@pytest.mark.network
def test_default_recipe_builds_with_uv_and_pytest_from_pypi(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    from uv import find_uv_bin

    tree, _dep = tiny
    recipe = resolve_recipe(Task(instance_id="t-1", repo="local/tiny", base_commit="c", python="3.12"), tree)
    assert recipe.packages == ["pytest"]
    venv = tmp_path / "venv"
    env = bash(env_stage_script(recipe, python=find_interpreter("3.12").path, venv=str(venv),
                                uv=Path(find_uv_bin()), workdir=str(tree)), tmp_path)
    assert env.returncode == 0, env.stderr[-3000:]
    inst = bash(instance_stage_script(recipe, venv=str(venv), workdir=str(tree)), tmp_path)
    assert inst.returncode == 0, inst.stderr[-3000:]
    check = "import tinypkg, tinydep, pytest, setuptools, pip; print(tinypkg.NAME, tinydep.NAME)"
    out = subprocess.run([str(venv / "bin" / "python"), "-c", check], capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "tinypkg tinydep", out.stderr


@pytest.mark.network
def test_constraints_bind_every_install_of_both_stages(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    """``constraints`` reach uv (env stage) and pip (instance stage): both get six < 1.16."""
    from uv import find_uv_bin

    tree, _dep = tiny
    recipe = EnvRecipe(python="3.12", packages=["six"], constraints=["six<1.16"],
                       install="python -m pip install --force-reinstall six")
    venv = tmp_path / "venv"
    env = bash(env_stage_script(recipe, python=find_interpreter("3.12").path, venv=str(venv),
                                uv=Path(find_uv_bin()), workdir=str(tree)), tmp_path)
    assert env.returncode == 0, env.stderr[-3000:]
    inst = bash(instance_stage_script(recipe, venv=str(venv), workdir=str(tree)), tmp_path)
    assert inst.returncode == 0, inst.stderr[-3000:]
    assert "six-1.15.0" in inst.stdout + inst.stderr  # pip installed the constrained release
    out = subprocess.run([str(venv / "bin" / "python"), "-c", "import six; print(six.__version__)"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "1.15.0", out.stderr


def test_each_pip_install_of_a_shell_list_is_pre_resolved_as_of_the_cutoff() -> None:
    """SWE-Gym's installs are shell lists (dvc: seven pip installs joined by ';', '&&', '|| true'):
    each pip install is resolved by uv as of the recipe's date first, in order; others are not."""
    assert command_segments('a "b;c" ; d && e || true; f') == ['a "b;c"', "d", "e", "true", "f"]
    install = ('python -m pip install --upgrade pip; python -m pip install "cython<3.0.0" && '
               "pip install -r tests/requirements.txt || true; sed -i s/a/b/ setup.py; "
               'pip install -e ".[tests]"; pip install $EXTRA')
    recipe = EnvRecipe(python="3.10", exclude_newer="2024-10-01", install=install)
    script = instance_stage_script(recipe, uv=Path("/bin/uv"))
    uv = "/bin/uv pip install --python /sweworld/venv/bin/python --exclude-newer 2024-10-01 "
    pre = [line.split(" || ")[0] for line in script.splitlines() if line.startswith(uv)]
    assert pre == [uv + "--upgrade pip", uv + '"cython<3.0.0"', uv + "-r tests/requirements.txt",
                   uv + '-e ".[tests]"']
    assert script.rstrip().endswith(install) and script.index(pre[-1]) < script.index(install)
    assert uv not in instance_stage_script(recipe.model_copy(update={"exclude_newer": None}), uv=Path("/bin/uv"))


@pytest.mark.network
def test_a_pip_install_list_gets_the_releases_of_its_date(tiny: tuple[Path, Path], tmp_path: Path) -> None:
    """pip has no date cutoff: without the pre-resolve, ``pip install six`` in a list takes today's six."""
    from uv import find_uv_bin

    tree, _dep = tiny
    uv = Path(find_uv_bin())
    recipe = EnvRecipe(python="3.12", exclude_newer="2020-01-01",
                       install="python -m pip install six || true; python -m pip install attrs;")
    venv = tmp_path / "venv"
    env = bash(env_stage_script(recipe, python=find_interpreter("3.12").path, venv=str(venv), uv=uv,
                                workdir=str(tree)), tmp_path)
    assert env.returncode == 0, env.stderr[-3000:]
    inst = bash(instance_stage_script(recipe, venv=str(venv), uv=uv, workdir=str(tree)), tmp_path)
    assert inst.returncode == 0, inst.stderr[-3000:]
    check = "import six, attr; print(six.__version__, attr.__version__)"
    out = subprocess.run([str(venv / "bin" / "python"), "-c", check], capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip() == "1.13.0 19.3.0", out.stderr


def test_constraints_keep_existing_env_keys_and_come_from_the_era_table() -> None:
    from sweworld.envs.era import era_constraints
    from sweworld.envs.recipe import env_key, from_spec

    plain = EnvRecipe(python="3.9", packages=["six"])
    assert "constraints" not in plain.env_stage_fields()
    assert env_key(plain, "r", "c") != env_key(plain.model_copy(update={"constraints": ["six<2"]}), "r", "c")
    assert era_constraints("sphinx-doc/sphinx", "3.3") == ["docutils<0.21"]
    assert era_constraints("sphinx-doc/sphinx", "4.0") == [] and era_constraints("sphinx-doc/sphinx", None) == []
    spec = {"python": "3.9", "install": "python -m pip install -e .[test]"}
    assert from_spec(spec, "sphinx-doc/sphinx", None, "3.5").constraints == ["docutils<0.21"]
    assert from_spec(spec, "sphinx-doc/sphinx", None, "5.0").constraints == []
