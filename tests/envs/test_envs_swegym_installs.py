"""SWE-Gym's installs that need root or a global tool (pydantic's pdm, bokeh's npm) translated for a virtualenv build."""

from sweworld.envs import swegym_installs
from sweworld.envs.recipe import from_spec
from sweworld.envs.scripts import instance_stage_script
from sweworld.envs.swegym_specs import SWEGYM_SPECS


def test_pydantic_spec_installs_pdm_aside_and_runs_the_makefiles_swegym_installs():
    recipe = from_spec(SWEGYM_SPECS["pydantic/pydantic"]["2.5"], "pydantic/pydantic", None, "2.5", source="swegym")
    assert recipe.pre_install == [f'python -m venv {swegym_installs.PDM_VENV} && {swegym_installs.PDM_VENV}/bin/python '
                                  f'-m pip install -q "{swegym_installs.PDM_PIN}"']
    assert recipe.install == f"{swegym_installs.PDM_VENV}/bin/pdm sync {swegym_installs._GROUPS_BUT_DOCS};"
    assert "pdm add" not in recipe.install and "make" not in recipe.install
    notes = "\n".join(recipe.notes)
    assert "pdm add pre-commit" in notes and "make install -> pdm sync" in notes and "apt-get install -y pipx" in notes
    script = instance_stage_script(recipe)
    assert script.index("pip install -q") < script.index("pdm sync")


def test_python37_spec_keeps_its_own_commands_and_other_specs_are_untouched():
    spec = SWEGYM_SPECS["pydantic/pydantic"]["1.10"]
    recipe = from_spec(spec, "pydantic/pydantic", None, "1.10", source="swegym")
    assert recipe.python == "3.7" and swegym_installs.PDM_VENV in recipe.pre_install[0]
    for repo, version in [("python/mypy", "1.3"), ("getmoto/moto", "4.1")]:
        spec = SWEGYM_SPECS[repo][version]
        assert not swegym_installs.uses_pdm(list(spec.get("pre_install") or []))
        assert from_spec(spec, repo, None, version, source="swegym").install == spec["install"]


def test_other_install_steps_of_a_pdm_spec_stay_in_order():
    notes: list[str] = []
    pre, install = swegym_installs.translate(["pipx install pdm", "echo hi"], "pdm add pre-commit; make install; pytest --co",
                                         notes)
    assert pre[1] == "echo hi" and install.endswith("; pytest --co;")


def test_bokeh_spec_leaves_out_the_global_npm_upgrade_and_keeps_npm_ci():
    spec = SWEGYM_SPECS["bokeh/bokeh"]["3.3"]
    notes: list[str] = []
    pre, install = swegym_installs.translate(list(spec["pre_install"]), spec["install"], notes)
    assert pre == ["cd bokehjs && npm ci && cd ../"] and install == spec["install"]
    assert len(notes) == 1 and "--location=global" in notes[0]


def test_the_groups_of_a_pdm_lock_but_docs_and_default(tmp_path):
    import subprocess

    (tmp_path / "pdm.lock").write_text('[metadata]\ngroups = ["default", "docs", "email", "testing"]\n'
                                       'lock_version = "4.3"\n')
    out = subprocess.run(["bash", "-c", f"echo {swegym_installs._GROUPS_BUT_DOCS}"], cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["-G", "email", "-G", "testing"]
