# The two commands the README promises: `make run` and `make test`.
# Both set themselves up on a fresh machine (see scripts/setup-system.sh for the Debian packages).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
# Options for pytest, e.g. make pytest PYTEST_ARGS="-n 0 -x" (it runs on pytest-xdist workers: pyproject.toml).
PYTEST_ARGS ?=
# The editable install's bytecode, written once here: where PYTHONDONTWRITEBYTECODE=1 is set (CI, these
# machines) Python still reads __pycache__ but never writes it, so every `qkv` would compile qkv's modules
# and the lesson files again. py_compile writes regardless; an edited file's cache is stale by its mtime
# and simply not used.
COMPILE = $(BIN)/python -m compileall -q src

# The tests that wait on a grader or a server, run by `make test-under-load` beside one busy loop per core;
# QKV_TEST_TIME_SCALE stretches their remaining deadlines (tests/time_scale.py).
UNDER_LOAD_TESTS ?= tests/web/runs tests/web/learner/test_api_code.py tests/grading tests/reliability
UNDER_LOAD_SCALE ?= 2
# Open edX's LTI consumer, a third LMS of the tests (tests/web/lti/test_openedx.py), in its own environment:
# Django and its dependencies never enter qkv's.
OPENEDX_VENV := .venv-openedx
OPENEDX_REQUIREMENTS := scripts/openedx_lms/requirements.txt

# The front end's type check: TypeScript (pinned in frontend/package-lock.json) reads our scripts and the
# widgets as JavaScript with their JSDoc types (frontend/tsconfig.json; the CodeMirror bundle is read through
# its declaration, src/qkv/web/static/vendor/editor.d.ts), and the shared modules every widget imports under
# TypeScript's strict rules too (frontend/tsconfig.kit.json). npm ci installs the lock's exact versions.
FRONTEND := frontend
TSC := $(FRONTEND)/node_modules/.bin/tsc

.PHONY: run test lint typecheck pytest test-under-load system clean bench image

# qkv's OCI image from Debian packages and PyPI wheels, no registry pull (scripts/build-image.sh; root,
# podman and mmdebstrap). Each step is cached under build/image/; docs/operations.md says how to run it.
IMAGE ?= localhost/qkv:latest

$(BIN)/qkv: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[web]"
	$(COMPILE)
	touch $@

$(VENV)/.test-installed: $(BIN)/qkv
	$(BIN)/python -m pip install -q -e ".[web,test,oracle]"
	$(COMPILE)
	touch $@

$(OPENEDX_VENV)/.installed: $(OPENEDX_REQUIREMENTS)
	test -x $(OPENEDX_VENV)/bin/python || $(PYTHON) -m venv $(OPENEDX_VENV)
	$(OPENEDX_VENV)/bin/python -m pip install -q -r $(OPENEDX_REQUIREMENTS)
	touch $@

system:
	bash scripts/setup-system.sh

run: $(BIN)/qkv
	-bash scripts/setup-system.sh --run
	$(BIN)/qkv serve --host $(HOST) --port $(PORT)

$(TSC): $(FRONTEND)/package.json $(FRONTEND)/package-lock.json
	cd $(FRONTEND) && npm ci --no-audit --no-fund
	touch $@

lint: $(VENV)/.test-installed $(TSC)
	$(BIN)/ruff check src tests benchmarks conftest.py
	$(BIN)/ruff format --check src tests benchmarks conftest.py
	$(TSC) -p $(FRONTEND)/tsconfig.json --checkJs --noEmit
	$(TSC) -p $(FRONTEND)/tsconfig.kit.json --checkJs --noEmit

typecheck: $(VENV)/.test-installed
	$(BIN)/mypy

pytest: $(VENV)/.test-installed $(OPENEDX_VENV)/.installed
	$(BIN)/pytest $(PYTEST_ARGS)

test: $(VENV)/.test-installed $(OPENEDX_VENV)/.installed
	-bash scripts/setup-system.sh --test
	$(MAKE) lint typecheck pytest

test-under-load: $(VENV)/.test-installed
	-bash scripts/setup-system.sh --test
	QKV_TEST_TIME_SCALE=$(UNDER_LOAD_SCALE) bash scripts/beside-cpu-hogs.sh $(BIN)/pytest $(UNDER_LOAD_TESTS) $(PYTEST_ARGS)

image: $(BIN)/qkv
	-bash scripts/setup-system.sh --image
	bash scripts/build-image.sh $(IMAGE)

clean:
	rm -rf $(VENV) $(OPENEDX_VENV) $(FRONTEND)/node_modules build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache test-artifacts
