"""Install specs that SWE-Gym published for its 11 repositories, transcribed as facts.

Source: the public SWE-Gym repository ``SWE-Gym/SWE-Bench-Fork``, file ``swebench/harness/constants.py``
(``SPECS_MYPY``, ``SPECS_MOTO``, ... merged into ``MAP_REPO_VERSION_TO_SPECS``), with the log parser
of each repository from ``swebench/harness/log_parsers.py``. The values (python version, install
command, pre_install, test_cmd, packages, ...) are written down here as data, per version, exactly as
that file evaluates them (string quirks included), in the shape of the ``swebench`` package's
``MAP_REPO_VERSION_TO_SPECS``: repo ``"owner/name"`` -> version string -> spec dict.

Only the standard library is imported at import time; ``versions()`` uses ``packaging`` when it is
installed. Behaviour SWE-Gym implements in code rather than in the specs is noted in comments below.
"""

from __future__ import annotations

import copy
import re
from typing import Any

_APT = "apt-get -y update && apt-get -y upgrade && apt-get install -y "

# -- python/mypy -------------------------------------------------------------------------------
# SWE-Gym's make_test_command() appends to this test_cmd (ending in "-k") the quoted names of the
# "[case NAME]" blocks found in the test patch, joined with " or "; no test files are passed
# (harness.directives.test_directives does the same for any test_cmd ending in "-k").
_MYPY_PRE = ["git submodule update --init mypy/typeshed || true"]
_MYPY_INSTALL = "python -m pip install -r test-requirements.txt; python -m pip install -e .; "
_MYPY = [
    ("1.7 1.8 1.9 1.10 1.11",
     {"pre_install": _MYPY_PRE, "python": "3.12", "install": _MYPY_INSTALL + "hash -r",
      "test_cmd": "pytest -rA -k"}),
    ("1.0 1.1 1.2 1.3 1.4 1.5 1.6",
     {"pre_install": _MYPY_PRE, "python": "3.11", "install": _MYPY_INSTALL + "hash -r",
      "test_cmd": "pytest -n0 -rA -k"}),
    ("0.990 0.980 0.970 0.960 0.950 0.940",
     {"pre_install": _MYPY_PRE, "python": "3.10",
      "install": _MYPY_INSTALL + "pip install pytest pytest-xdist; hash -r",
      "test_cmd": "pytest -n0 -rA -k"}),
    # types-typing-extensions is yanked; SWE-Gym pins it in test-requirements.txt
    ("0.920 0.910 0.820 0.810 0.800",
     {"pre_install": [*_MYPY_PRE, "sed -i '1i types-typing-extensions==3.7.3' test-requirements.txt"],
      "python": "3.9", "install": _MYPY_INSTALL + "pip install pytest pytest-xdist; hash -r;",
      "test_cmd": "pytest -n0 -rA -k"}),
]  # versions before 0.800 are commented out in the source ("hard to install")

# -- getmoto/moto ------------------------------------------------------------------------------
_MOTO = [
    ("0.4 1.0 1.2 1.3 2.0 2.1 2.2 2.3 3.0 3.1 4.0 4.1 4.2 5.0",
     {"python": "3.12", "install": "make init", "test_cmd": "pytest -n0 -rA"}),
]

# -- conan-io/conan ----------------------------------------------------------------------------
_CONAN_REQS = ("python -m pip install -r conans/requirements.txt; "
               "python -m pip install -r conans/requirements_server.txt; "
               "python -m pip install -r conans/requirements_dev.txt ")  # trailing space is in the source
_CONAN = {"python": "3.10", "pre_install": [_APT + "build-essential cmake"],
          "eval_commands": ["export PYTHONPATH=${PYTHONPATH:-}:$(pwd)"], "test_cmd": "pytest -n0 -rA"}
_CONAN_GROUPS = [
    # cython<3 constraint (https://github.com/conan-io/conan/issues/14319)
    ("1.33 1.34 1.36 2.0 1.35 1.37 1.46 1.38 1.39 1.40 1.41 1.42 1.45 1.43 1.44 1.47 1.48 1.49 1.50 1.51 "
     "1.52 1.53 1.55 1.54 1.57 1.58 1.59",
     {**_CONAN,
      "install": "echo 'cython<3' > /tmp/constraint.txt; export PIP_CONSTRAINT=/tmp/constraint.txt; "
                 + _CONAN_REQS}),
    ("2.1 1.60 1.61 1.62 2.2 2.3 2.4", {**_CONAN, "install": _CONAN_REQS}),
]

# -- dask/dask ---------------------------------------------------------------------------------
# No "python" key (commented out in the source): the conda env comes from environment.yml alone.
_DASK = [
    ("2.11 2.12 2.13 2.14 2.15 2.16 2.17 2.18 2.19 2.21 2.22 2.23 2.25 2.26 2.27 2.28 2.29 2.30 2020.12 "
     "2021.01 2021.02 2021.03 2021.04 2021.05 2021.06 2021.07 2021.08 2021.09 2021.10 2021.11 2021.12 "
     "2022.01 2022.02 2022.03 2022.04 2022.05 2022.6 2022.7 2022.8 2022.9 2022.10 2022.11 2022.12 "
     "2023.1 2023.2 2023.3 2023.4 2023.5 2023.6 2023.7 2023.8 2023.9 2023.10 2023.11 2023.12 "
     "2024.1 2024.2 2024.3 2024.4 2024.5",
     # env_patches: the pip section of environment.yml would install dask from GitHub
     {"env_patches": ["sed -i '/- pip:/,/^ *-/d' environment.yml"], "packages": "environment.yml",
      "install": "python -m pip install --no-deps -e .", "test_cmd": "pytest -n0 -rA  --color=no"}),
]

# -- Project-MONAI/MONAI -----------------------------------------------------------------------
_MONAI = [
    ("0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 0.11 0.105 1.0 1.1 1.2 1.3",
     {"python": "3.8",
      "install": r"sed -i '/^git+https:\/\/github.com\/Project-MONAI\//d' requirements-dev.txt; "
                 "python -m pip install types-pkg-resources==0.1.3 pytest; "
                 "pip install -r requirements-dev.txt;python setup.py develop;",
      "test_cmd": "pytest -rA "}),
]

# -- iterative/dvc -----------------------------------------------------------------------------
_DVC_PRE = [
    _APT + "cmake",
    r"[ -f setup.py ] && sed -E -i 's/moto==([0-9]+\.[0-9]+\.[0-9]+)\.dev[0-9]+/moto==\1/' setup.py",
    # (sic) a missing comma in the source joins the pyarrow and boto3 fixes into one string
    "[ -f setup.py ] && sed -i 's/pyarrow==0.15.1/pyarrow==0.16/' setup.py"
    + "[ -f setup.py ] && sed -i 's/boto3==1.9.115/boto3==1.9.201/' setup.py",
]
_DVC_INSTALL = ("python -m pip install --upgrade pip wheel GitPython; "
                'python -m pip install "cython<3.0.0" && '
                "python -m pip install --no-build-isolation pyyaml==5.4.1; "
                "python -m pip install git+https://github.com/iterative/mock-ssh-server.git || true; "
                "python -m pip install -r tests/requirements.txt || true; "
                "python -m pip install -r test-requirements.txt || true; "
                'python -m pip install -e ".[tests,dev,all_remotes,all,testing]";')
# versions <= 3.3; pytest 8 breaks pytest-lazy-fixture
_DVC_OLD = ' python -m pip install "numpy<=1.20"; python -m pip install "pytest<8";'
_DVC = [
    ("0.1 0.8 0.9 0.12 0.13 0.14 0.15 0.16 0.17 0.18 0.19 0.20 0.21 0.22 0.23 0.24 0.27 0.28 0.29 0.30 0.31 "
     "0.32 0.33 0.34 0.35 0.40 0.41 0.50 0.51 0.52 0.53 0.54 0.55 0.56 0.57 0.58 0.59 0.60 0.61 0.62 0.63 "
     "0.65 0.66 0.68 0.69 0.70 0.71 0.74 0.75 0.76 0.77 0.78 0.80 0.81 0.82 0.83 0.84 0.85 0.86 0.87 0.88 "
     "0.89 0.90 0.91 0.92 0.93",
     {"python": "3.8", "pre_install": _DVC_PRE, "install": _DVC_INSTALL + _DVC_OLD,
      "test_cmd": "pytest -rA"}),
    ("1.0 1.1 1.2 1.3 1.4 1.5 1.6 1.7 1.8 1.9 1.10 1.11 2.0 2.1 2.2 2.3 2.4 2.5 2.6 2.7 2.8 2.9 2.10 2.11 "
     "2.12 2.13 2.15 2.17 2.19 2.20 2.21 2.22 2.23 2.24 2.27 2.28 2.30 2.33 2.34 2.35 2.38 2.41 2.43 2.44 "
     "2.45 2.46 2.48 2.50 2.51 2.52 2.54 2.55 2.56 2.57 2.58 3.0 3.1 3.2 3.3",
     {"python": "3.9", "pre_install": _DVC_PRE, "install": _DVC_INSTALL + _DVC_OLD,
      "test_cmd": "pytest -rA"}),
    ("3.4 3.5 3.6 3.10 3.11 3.12 3.13 3.14 3.15 3.17 3.19 3.23 3.24 3.28 3.29 3.36 3.37 3.38 3.43 3.47 "
     "3.48 3.49",
     {"python": "3.10", "pre_install": _DVC_PRE, "install": _DVC_INSTALL, "test_cmd": "pytest -rA"}),
]

# -- bokeh/bokeh -------------------------------------------------------------------------------
_BOKEH_PRE = ["cd bokehjs && npm install --location=global npm && npm ci && cd ../"]
_BOKEH = [
    ("3.0 3.3 3.4 3.5",
     {"python": "3.10", "packages": "environment.yml", "pre_install": _BOKEH_PRE,
      "install": "python -m pip install -e .; python -m pip install bokeh_sampledata;",
      "test_cmd": "pytest -rA -n0"}),
    # two identical groups in the source (2.x, and 0.x/1.x); "\n" is a real newline (non-raw string there)
    ("2.0 2.1 2.3 2.4 0.4 0.5 0.6 0.7 0.8 0.9 0.10 0.11 0.12 0.13 0.1181316818 1.0 1.1 1.2 1.3 1.4",
     {"python": "3.8", "packages": "environment.yml",
      "env_patches": [": \"${CONDA_MKL_INTERFACE_LAYER_BACKUP:=''}\""], "pre_install": _BOKEH_PRE,
      "install": 'pip install "setuptools<66" "jinja2<3.1"; printf "1\n" | python setup.py develop; '
                 "bokeh sampledata;",
      "test_cmd": "pytest -rA -n0"}),
]

# -- modin-project/modin -----------------------------------------------------------------------
_MODIN = {"pre_install": [_APT + "libpq-dev"], "packages": "environment.yml", "test_cmd": "pytest -n0 -rA"}
_MODIN_GROUPS = [
    ("0.1 0.2 0.3 0.4 0.6 0.8 0.9 0.10 0.11 0.12 0.13 0.14 0.15 0.16 0.17 0.18 0.19",
     {**_MODIN, "python": "3.8",
      "install": "python -m pip install -e .; python -m pip install numpy==1.23.1 protobuf==3.20.1;"}),
    ("0.20 0.21 0.22 0.23 0.24 0.25 0.26 0.27 0.28 0.29 0.30",
     {**_MODIN, "python": "3.9", "install": "python -m pip install -e .;"}),
]


# -- pydantic/pydantic -------------------------------------------------------------------------
def _pydantic_pre(pdm: str) -> list[str]:
    return ["apt-get update && apt-get install -y locales", "apt-get install -y pipx", "pipx ensurepath", pdm,
            'export PATH="$HOME/.local/bin:$PATH"', "which python", "python --version"]


_PYDANTIC = {"install": 'export PATH="$HOME/.local/bin:$PATH"; pdm add pre-commit; make install;',
             "test_cmd": "pytest -rA --tb=short -vv -o console_output_style=classic --no-header"}
_PYDANTIC_GROUPS = [
    # marked "not working yet" in the source
    ("0.2 0.41 0.4 0.6 0.9 0.10 0.11 0.13 0.14 0.151 0.15 0.17 0.18 0.201 0.20 0.24 0.27 0.29 1.01 0.32 1.4 "
     "1.31 1.41 1.51 1.5 1.71 1.6 1.7 1.8 1.9 1.10",
     {**_PYDANTIC, "python": "3.7", "pre_install": _pydantic_pre("pipx install pdm  --python python3.7")}),
    ("2.0 2.01 2.02 2.03 2.04 2.6 2.5 2.4 2.7",
     {**_PYDANTIC, "python": "3.8", "pre_install": _pydantic_pre("pipx install pdm")}),
]

# -- pandas-dev/pandas -------------------------------------------------------------------------
# No "python" key: the conda env comes from environment.yml alone.
_PANDAS_INSTALL = ("python -m pip install -ve . --no-build-isolation -Ceditable-verbose=true; "
                   "pip uninstall pytest-qt -y;")
_PANDAS = {"packages": "environment.yml",
           "pre_install": ["git remote add upstream https://github.com/pandas-dev/pandas.git",
                           "git fetch upstream --tags"],
           "test_cmd": "pytest -rA --tb=long"}
_PANDAS_GROUPS = [
    ("0.16 0.17 0.18 0.19 0.20 0.21 0.22 0.23 0.24 0.25 0.26 1.0 1.1 1.2 1.3 1.4 1.5 2.0 2.1",
     # numpy 2 is supported from pandas 2.2
     {**_PANDAS, "install": "python -m pip install 'numpy<2'; " + _PANDAS_INSTALL}),
    ("2.2 3.0", {**_PANDAS, "install": _PANDAS_INSTALL}),
]

# -- facebookresearch/hydra --------------------------------------------------------------------
_HYDRA_INSTALL = "pip install -r requirements/dev.txt; pip install -e .;"
_HYDRA = {"python": "3.8", "pre_install": [_APT + "openjdk-17-jdk openjdk-17-jre"],
          "test_cmd": "pytest -rA --tb=long"}
_HYDRA_GROUPS = [
    # isort moved to https; omegaconf needs pip==24.0 (also appended to requirements/requirements.txt)
    ("0.1 0.9 0.10 0.11 0.12 1.0 1.1 1.2",
     {**_HYDRA, "install": "sed -i 's|isort@git+git://github.com/timothycrosley/isort|"
                           "isort@git+https://github.com/timothycrosley/isort|g' requirements/dev.txt; "
                           '{ tail -n1 requirements/requirements.txt | grep -q "." && echo ""; } '
                           ">> requirements/requirements.txt; "
                           'echo "pip==24.0" >> requirements/requirements.txt;'
                           'pip install "pip==24.0"; ' + _HYDRA_INSTALL}),
    ("1.3 1.4", {**_HYDRA, "install": _HYDRA_INSTALL}),
]

_GROUPS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "getmoto/moto": _MOTO,
    "python/mypy": _MYPY,
    "pydantic/pydantic": _PYDANTIC_GROUPS,
    "dask/dask": _DASK,
    "conan-io/conan": _CONAN_GROUPS,
    "facebookresearch/hydra": _HYDRA_GROUPS,
    "modin-project/modin": _MODIN_GROUPS,
    "bokeh/bokeh": _BOKEH,
    "iterative/dvc": _DVC,
    "Project-MONAI/MONAI": _MONAI,
    "pandas-dev/pandas": _PANDAS_GROUPS,
}

# repo -> version -> spec. SWE-Gym lower-cases the repo keys of its map; lookups here ignore case.
SWEGYM_SPECS: dict[str, dict[str, dict[str, Any]]] = {
    repo: {version: copy.deepcopy(spec) for versions_, spec in groups for version in versions_.split()}
    for repo, groups in _GROUPS.items()
}

# Log parsers per repository (SWE-Gym's log_parsers.py): harness/swegym_parsers.py, where grading lives.

# MAP_REPO_TO_REQS_PATHS entries for these repos (neither spec uses packages="requirements.txt").
REQS_PATHS: dict[str, list[str]] = {
    "Project-MONAI/MONAI": ["requirements-dev.txt"],
    "facebookresearch/hydra": ["requirements/dev.txt"],
}

# MAP_REPO_TO_ENV_YML_PATHS entries (tried in order; the "name:" line is rewritten to the env name).
ENV_YML_PATHS: dict[str, list[str]] = {
    "bokeh/bokeh": ["conda/environment-test-3.10.yml", "environment.yml"],  # v3, then v2 (v1: none listed)
    "modin-project/modin": ["environment-dev.yml"],
    "dask/dask": ["continuous_integration/environment-3.10.yaml",
                  "continuous_integration/environment-3.9.yaml",
                  "continuous_integration/environment-3.8.yaml",
                  "continuous_integration/travis/travis-37.yaml"],
    "pandas-dev/pandas": ["environment.yml"],
}

_BY_LOWER = {repo.lower(): repo for repo in SWEGYM_SPECS}


def _repo_key(repo: str) -> str | None:
    return _BY_LOWER.get(repo.lower()) if repo else None


def has_repo(repo: str) -> bool:
    """Whether SWE-Gym published install specs for this repository (case-insensitive)."""
    return _repo_key(repo) is not None


def spec_for(repo: str, version: str | float | None) -> dict[str, Any] | None:
    """A deep copy of SWE-Gym's spec for (repo, version); None when it has none.

    ``version`` is matched as a string, also with or without a leading "v". A float loses trailing
    zeros ("0.10" arrives as 0.1), so pass versions as strings where they have them.
    """
    key = _repo_key(repo)
    if key is None or version is None or version == "":
        return None
    specs = SWEGYM_SPECS[key]
    text = str(version).strip()
    for candidate in (text, text[1:] if text[:1] in "vV" else "v" + text):
        if candidate in specs:
            return copy.deepcopy(specs[candidate])
    return None


def _fallback_key(version: str) -> tuple[Any, ...]:
    parts = re.findall(r"\d+", version)
    return (0, tuple(int(p) for p in parts), version) if parts else (1, (), version)


def versions(repo: str) -> list[str]:
    """The versions SWE-Gym has specs for, oldest first (``packaging.version`` order where they parse)."""
    key = _repo_key(repo)
    if key is None:
        return []
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # pragma: no cover - packaging is normally installed
        return sorted(SWEGYM_SPECS[key], key=_fallback_key)

    def sort_key(version: str) -> tuple[Any, ...]:
        try:
            return (0, Version(version), version)
        except InvalidVersion:
            return (1, version, version)

    return sorted(SWEGYM_SPECS[key], key=sort_key)
