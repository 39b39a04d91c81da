# Two commands do all set-up on a fresh machine with only Python installed:
#   make demo   create .venv, install odekit, run the main job
#   make test   create .venv, install odekit with its test extras and Debian's
#               chromium (for the browser tests of `odekit serve`), run the tests
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SUDO   := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: demo test bench chromium clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/odekit shootout kepler --report shootout-report

# the page's tests drive the system's Chromium with Playwright; with this set they
# fail, rather than skip, when it is missing
test: $(VENV)/.installed chromium
	ODEKIT_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q -n auto

chromium:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_core.py
	$(BIN)/python benchmarks/bench_stiff.py
	$(BIN)/python benchmarks/bench_cloth.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
