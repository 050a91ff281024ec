# The two commands: `make demo` runs the main job, `make test` runs the test suite.
# Each creates or refreshes .venv, installs sweworld and what it needs (bubblewrap through apt-get
# when running as root and it is missing), then runs.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
PY := $(VENV)/bin/python

.PHONY: demo test lint system venv clean

system:
	@missing=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v git >/dev/null 2>&1 || missing="$$missing git"; \
	command -v patch >/dev/null 2>&1 || missing="$$missing patch"; \
	command -v unshare >/dev/null 2>&1 || missing="$$missing util-linux"; \
	command -v openssl >/dev/null 2>&1 || missing="$$missing openssl"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	$(PYTHON) -c "import ensurepip, venv" >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing system packages:$$missing (install them, e.g. sudo apt-get install$$missing)"; exit 1; \
	  fi; \
	fi

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

venv: system $(STAMP)

demo: venv
	$(VENV)/bin/sweworld demo

test: venv
	$(VENV)/bin/ruff check --no-cache src tests benchmarks
	$(VENV)/bin/python -m pytest -n 2 --dist loadgroup -q $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/ruff check --no-cache src tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
