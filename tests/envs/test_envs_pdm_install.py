"""SWE-Gym's pydantic specs (pipx + pdm + make install) translated for a virtualenv build."""

from sweworld.envs import pdm_install
from sweworld.envs.recipe import from_spec
from sweworld.envs.scripts import instance_stage_script
from sweworld.envs.swegym_specs import SWEGYM_SPECS


def test_pydantic_spec_installs_pdm_aside_and_runs_the_makefiles_pdm_install():
    recipe = from_spec(SWEGYM_SPECS["pydantic/pydantic"]["2.5"], "pydantic/pydantic", None, "2.5", source="swegym")
    assert recipe.pre_install == [f'python -m venv {pdm_install.PDM_VENV} && {pdm_install.PDM_VENV}/bin/python '
                                  f'-m pip install -q "{pdm_install.PDM_PIN}"']
    assert recipe.install.startswith(f"{pdm_install.PDM_VENV}/bin/pdm install --group :all ")
    assert "--without docs" in recipe.install and "pdm add" not in recipe.install and "make" not in recipe.install
    notes = "\n".join(recipe.notes)
    assert "pdm add pre-commit" in notes and "make install -> pdm install" in notes and "apt-get install -y pipx" in notes
    script = instance_stage_script(recipe)
    assert script.index("pip install -q") < script.index("pdm install")


def test_python37_spec_keeps_its_own_commands_and_other_specs_are_untouched():
    spec = SWEGYM_SPECS["pydantic/pydantic"]["1.10"]
    recipe = from_spec(spec, "pydantic/pydantic", None, "1.10", source="swegym")
    assert recipe.python == "3.7" and pdm_install.PDM_VENV in recipe.pre_install[0]
    for repo, version in [("python/mypy", "1.3"), ("getmoto/moto", "4.1")]:
        spec = SWEGYM_SPECS[repo][version]
        assert not pdm_install.uses_pdm(list(spec.get("pre_install") or []))
        assert from_spec(spec, repo, None, version, source="swegym").install == spec["install"]


def test_other_install_steps_of_a_pdm_spec_stay_in_order():
    notes: list[str] = []
    pre, install = pdm_install.translate(["pipx install pdm", "echo hi"], "pdm add pre-commit; make install; pytest --co",
                                         notes)
    assert pre[1] == "echo hi" and install.endswith("; pytest --co;")
