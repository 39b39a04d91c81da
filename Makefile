# Two commands do all set-up on a fresh machine with only Python installed:
#   make demo   create .venv, install odekit, run the main job
#   make test   create .venv, install odekit with its test extras, run the tests
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(BIN)/odekit shootout kepler --report shootout-report

test: $(VENV)/.installed
	$(BIN)/python -m pytest -q -n auto

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_core.py
	$(BIN)/python benchmarks/bench_stiff.py
	$(BIN)/python benchmarks/bench_cloth.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
