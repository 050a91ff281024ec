# The two commands: `make demo` runs the main job, `make test` runs the test suite.
# Each creates or refreshes .venv, installs sweworld and what it needs (bubblewrap through apt-get
# when running as root and it is missing; skopeo for container images and docker-registry for their tests
# too, which an ordinary user may go without), then runs. Installs go through uv from the committed
# lock files: requirements/demo.txt (the core dependencies: all the demo imports) for `make demo`,
# requirements/dev.txt (the `dev` extra: test tools, torch CPU, TRL, Ray) for `make test`;
# `make lock` regenerates both from pyproject.toml.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
# uv's own pin, read from the lock (one place: pyproject.toml's uv==, compiled into the lock)
UV_VERSION = $(shell sed -n 's/^uv==//p' $(DEV_LOCK))
PIP_VERSION := 26.3
DEMO_LOCK := requirements/demo.txt
DEV_LOCK := requirements/dev.txt
# the seams that need Python >= 3.12 (OpenHands, Harbor) are tested in a second environment of their own:
# .venv-py312, from requirements/dev312.txt (no torch: the project's own venv stays on 3.11, where the
# CPU torch build is at hand); its interpreter is found as task environments' are (uv, pyenv, PATH)
VENV312 := .venv-py312
DEV312_LOCK := requirements/dev312.txt
DEV312_STAMP := $(VENV312)/.installed-dev312
LOCK312_ARGS := --python-version 3.12 --python-platform x86_64-manylinux_2_28 --custom-compile-command 'make lock' -q
# verl 0.9.1 needs transformers<5.11 (TRL's 5.23 is in dev): its agent loop is tested in a third environment,
# .venv-verl (CPython 3.11, found as .venv-py312's interpreter is), from requirements/devverl.txt (torch's CPU build)
VENVVERL := .venv-verl
DEVVERL_LOCK := requirements/devverl.txt
DEVVERL_STAMP := $(VENVVERL)/.installed-devverl
# separate stamps: `make demo` after `make test` keeps the test tools, `make test` after `make demo` adds them
DEMO_STAMP := $(VENV)/.installed-demo
DEV_STAMP := $(VENV)/.installed-dev
# where uv finds torch's CPU build (not on PyPI): the find-links pip is configured with, as pip found
# it before, else the PyTorch CPU index; `make test TORCH_FIND_LINKS=DIR-OR-URL` to choose
TORCH_FIND_LINKS ?= $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null),https://download.pytorch.org/whl/cpu/torch/)
UV_PIP := $(UV) pip
LOCK_ARGS := --python-version 3.11 --python-platform x86_64-manylinux_2_28 --custom-compile-command 'make lock' -q

.PHONY: demo test test-sandboxed lint lock system venv venv312 venvverl venv-demo clean

system:
	@missing=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v git >/dev/null 2>&1 || missing="$$missing git"; \
	command -v patch >/dev/null 2>&1 || missing="$$missing patch"; \
	command -v unshare >/dev/null 2>&1 || missing="$$missing util-linux"; \
	command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	$(PYTHON) -c "import ensurepip, venv" >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	optional=""; \
	command -v skopeo >/dev/null 2>&1 || optional="$$optional skopeo"; \
	command -v docker-registry >/dev/null 2>&1 || optional="$$optional docker-registry"; \
	if [ -n "$$missing$$optional" ] && [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing:$$missing$$optional"; \
	  (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing $$optional >/dev/null; \
	elif [ -n "$$missing" ]; then \
	  echo "missing system packages:$$missing (install them, e.g. sudo apt-get install$$missing)"; exit 1; \
	elif [ -n "$$optional" ]; then \
	  echo "note: without$$optional, container images cannot be pulled (skopeo) or served to the tests (docker-registry)"; \
	fi

# the venv and uv in it (pip stays: sweworld downloads sdists with `python -m pip download`)
$(UV):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check pip==$(PIP_VERSION) uv==$(UV_VERSION)

# adds the demo's pins (a subset of the dev pins) and removes nothing
$(DEMO_STAMP): pyproject.toml $(DEMO_LOCK) | $(UV)
	$(UV_PIP) install -q --python $(PY) -r $(DEMO_LOCK)
	$(UV_PIP) install -q --python $(PY) --no-deps -e .
	@touch $@

# exactly the dev pins (sync removes what is not in them), then sweworld itself, editable
$(DEV_STAMP): pyproject.toml $(DEV_LOCK) | $(UV)
	$(UV_PIP) sync -q --python $(PY) $(foreach f,$(TORCH_FIND_LINKS),--find-links $(f)) $(DEV_LOCK)
	$(UV_PIP) install -q --python $(PY) --no-deps -e .
	@touch $@ $(DEMO_STAMP)

# the 3.12 environment (the test modules marked py312 run there: the others import 3.11-only packages);
# its interpreter found by sweworld's own discovery, then exactly the dev312 pins
$(DEV312_STAMP): pyproject.toml $(DEV312_LOCK) | $(DEV_STAMP)
	@test -x $(VENV312)/bin/python || $(UV) venv -q --python "$$($(PY) -m sweworld.envs.discovery 3.12)" $(VENV312)
	$(UV_PIP) sync -q --python $(VENV312)/bin/python $(DEV312_LOCK)
	$(UV_PIP) install -q --python $(VENV312)/bin/python --no-deps -e .
	@touch $@

venv312: venv $(DEV312_STAMP)

# the verl environment (the test modules marked verl run there), exactly the devverl pins
$(DEVVERL_STAMP): pyproject.toml $(DEVVERL_LOCK) | $(DEV_STAMP)
	@test -x $(VENVVERL)/bin/python || $(UV) venv -q --python "$$($(PY) -m sweworld.envs.discovery 3.11)" $(VENVVERL)
	$(UV_PIP) sync -q --python $(VENVVERL)/bin/python $(foreach f,$(TORCH_FIND_LINKS),--find-links $(f)) $(DEVVERL_LOCK)
	$(UV_PIP) install -q --python $(VENVVERL)/bin/python --no-deps -e .
	@touch $@

venvverl: venv $(DEVVERL_STAMP)

venv-demo: system $(DEMO_STAMP)

venv: system $(DEV_STAMP)

demo: venv-demo
	$(VENV)/bin/sweworld demo

test: venv312 venvverl
	$(VENV)/bin/ruff check --no-cache src tests benchmarks
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup -q $(PYTEST_ARGS)
	$(VENV312)/bin/python -m pytest -n 2 --dist loadgroup -q -m py312 $$(grep -rl 'pytest.mark.py312' tests) $(PYTEST_ARGS)
	$(VENVVERL)/bin/python -m pytest -n 2 --dist loadgroup -q -m verl $$(grep -rl 'pytest.mark.verl' tests) $(PYTEST_ARGS)

# what an ordinary user's machine must run as well as root's (.ci/run runs it as one): every test that
# opens a sandbox (bwrap-marked, in all three environments) and the rest of the sandbox, environment,
# harness, server and image tests
SANDBOXED_DIRS := tests/sandbox tests/envs tests/harness tests/integrations tests/backends tests/oci
test-sandboxed: venv312 venvverl
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup -q -m "bwrap and not py312 and not verl" $(PYTEST_ARGS)
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup -q -m "not bwrap and not py312 and not verl" $(SANDBOXED_DIRS) $(PYTEST_ARGS)
	$(VENV312)/bin/python -m pytest -n 2 --dist loadgroup -q -m "py312 and bwrap" $$(grep -rl 'pytest.mark.py312' tests) $(PYTEST_ARGS)
	$(VENVVERL)/bin/python -m pytest -n 2 --dist loadgroup -q -m "verl and bwrap" $$(grep -rl 'pytest.mark.verl' tests) $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/ruff check --no-cache src tests benchmarks

# the lock files, for CPython 3.11 on Linux x86_64; the demo's pins are taken from the dev ones
lock: | $(UV)
	$(UV_PIP) compile pyproject.toml --extra dev $(LOCK_ARGS) \
	  $(foreach f,$(TORCH_FIND_LINKS),--find-links $(f)) -o $(DEV_LOCK)
	$(UV_PIP) compile pyproject.toml -c $(DEV_LOCK) $(LOCK_ARGS) -o $(DEMO_LOCK)
	$(UV_PIP) compile pyproject.toml --extra dev312 $(LOCK312_ARGS) -o $(DEV312_LOCK)
	$(UV_PIP) compile pyproject.toml --extra devverl $(LOCK_ARGS) \
	  $(foreach f,$(TORCH_FIND_LINKS),--find-links $(f)) -o $(DEVVERL_LOCK)

clean:
	rm -rf $(VENV) $(VENV312) $(VENVVERL) build *.egg-info
