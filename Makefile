# Two commands do all set-up on a fresh machine with only Python installed:
#   make demo   create .venv, install odekit (only what the demo needs), run the main job
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

# one stamp per set of extras: the demo and the benchmarks need odekit alone, the tests
# the test extras, which bring the server and Playwright
$(VENV)/.installed-base: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed-base

# the demo's loops are compiled first, a line per family, rather than in silence inside the
# shootout (`odekit warmup` alone compiles every family's: README, "The first run")
demo: $(VENV)/.installed-base
	$(BIN)/odekit warmup --families explicit_rk,splitting
	$(BIN)/odekit shootout kepler --report shootout-report

# the page's tests drive the system's Chromium with Playwright; with this set they
# fail, rather than skip, when it is missing
test: $(VENV)/.installed-test chromium
	ODEKIT_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q -n auto

chromium:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }

# the benchmarks' peers (the `peers` extra); numbalsoda compiles Fortran as it installs
$(VENV)/.installed-bench: $(BIN)/python pyproject.toml
	@command -v gfortran >/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq gfortran >/dev/null; }
	$(BIN)/python -m pip install --quiet -e '.[peers]'
	touch $@ $(VENV)/.installed-base

# every benchmark, each as a script (benchmarks/README.md); `--quick` runs are part of `make test`
BENCHMARKS := core pairs controllers stiff lsoda floor events startup cloth ensemble whfast nbody reversible rkn
bench: $(VENV)/.installed-bench
	for b in $(BENCHMARKS); do $(BIN)/python benchmarks/bench_$$b.py || exit 1; done

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
