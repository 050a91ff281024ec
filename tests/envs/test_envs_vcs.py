"""VCS requirements installed from the package index when SWEWORLD_VCS_FROM_INDEX is set."""

from pathlib import Path

from sweworld.envs import swebench_specs as sbs
from sweworld.envs import vcs


def test_the_distribution_a_vcs_requirement_names():
    assert vcs.from_index("isort@git+https://github.com/timothycrosley/isort") == "isort"
    assert vcs.from_index("mike @ git+https://github.com/jimporter/mike.git") == "mike"
    assert vcs.from_index("git+https://github.com/modin-project/modin-spreadsheet.git@49ffd89#egg=modin-spreadsheet") \
        == "modin-spreadsheet"
    assert vcs.from_index("-e git+https://github.com/a/b.git#egg=b[x]") == "b[x]"
    assert vcs.from_index("git+https://github.com/dask/distributed") == "distributed"  # the repository's name
    assert vcs.from_index("git+https://github.com/modin-project/modin-spreadsheet.git@49ffd89f683f") \
        == "modin-spreadsheet"
    assert vcs.from_index("requests>=2") is None


def test_requirements_and_yml_pip_lines_follow_the_switch(tmp_path: Path, monkeypatch):
    (tmp_path / "req.txt").write_text("pytest\nisort@git+https://github.com/timothycrosley/isort\n")
    (tmp_path / "env.yml").write_text("dependencies:\n  - pip:\n"
                                      "    - git+https://github.com/x/modin-spreadsheet.git@1#egg=modin-spreadsheet\n")
    notes: list[str] = []
    assert sbs.read_requirements(tmp_path / "req.txt", tmp_path, notes)[1].startswith("isort@git+")
    monkeypatch.setenv(vcs.ENV_VAR, "1")
    assert sbs.read_requirements(tmp_path / "req.txt", tmp_path, notes) == ["pytest", "isort"]
    assert sbs.read_environment_yml(tmp_path / "env.yml", tmp_path, notes)[0] == ["modin-spreadsheet"]
    assert sum(vcs.ENV_VAR in n for n in notes) == 2 and not any("yanked" in n for n in notes)


def test_requirement_files_of_the_install_are_rewritten_in_the_tree(tmp_path: Path, monkeypatch):
    import subprocess

    from sweworld.envs.recipe import from_spec
    from sweworld.envs.swegym_specs import SWEGYM_SPECS

    spec = SWEGYM_SPECS["facebookresearch/hydra"]["1.0"]
    assert from_spec(spec, "facebookresearch/hydra", None, "1.0", source="swegym").pre_install == []
    monkeypatch.setenv(vcs.ENV_VAR, "1")
    recipe = from_spec(spec, "facebookresearch/hydra", None, "1.0", source="swegym")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "dev.txt").write_text(
        "-r requirements.txt\nisort@git+https://github.com/timothycrosley/isort\n"
        "-e git+https://github.com/a/b.git@v1#egg=bee\nnox\n")
    subprocess.run(["bash", "-c", recipe.pre_install[-1]], cwd=tmp_path, check=True)
    assert (tmp_path / "requirements" / "dev.txt").read_text() == "-r requirements.txt\nisort\nbee\nnox\n"
