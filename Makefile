# auralgen — `make help` lists the targets.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
export PRA_NUM_THREADS := 1
export NUMBA_CACHE_DIR := $(CURDIR)/.auralgen_cache/numba
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT     := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends

.PHONY: help install dataset test test-long test-slow peers soundfont browser golden eval bench lint docs docs-serve clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PY) -m venv $(VENV)

$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	$(BIN)/python -m auralgen.rooms.hrtf fetch
	touch $(STAMP)

install: $(STAMP)  ## create .venv and install auralgen with its dev tools

dataset: $(STAMP)  ## generate the default suite into data/default/ (no network)
	$(BIN)/python generate.py

test: $(STAMP)  ## run the test suite (fast tests; slow ones are marked) on 2 processes (pytest-xdist)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile
	$(BIN)/python -m pytest -q -n 2 --doctest-modules auralgen  # the docstrings' examples

test-long: $(STAMP)  ## run the long tests (tests/conftest.py LONG: seconds to minutes each; installs the ray extra; CI runs them after make test)
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,ray]'
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m "long and not slow"

test-slow: $(STAMP) soundfont browser  ## run only the slow tests (installs the ray extra, FluidSynth and Chromium: cluster, SoundFont and browser tests)
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,ray,soundfont,listen-test]'
	$(BIN)/python -m pytest -q -m slow

PEERS_SOURCE ?= https://github.com/{repo}.git
peers: $(STAMP)  ## clone STAR-Bench, MMAR, MMAU, SonicBench at pinned commits into .peers/ (or AURALGEN_PEERS) for the interop tests; needs GitHub, or PEERS_SOURCE='<mirror>/{owner}+{name}'
	$(BIN)/python -m tests.support.peers fetch --source '$(PEERS_SOURCE)'

soundfont: $(STAMP)  ## source=soundfont: FluidSynth and the Fluid R3 GM SoundFont (Debian packages; root or sudo), pyfluidsynth
	@dpkg -s libfluidsynth3 fluid-soundfont-gm >/dev/null 2>&1 || $(APT) libfluidsynth3 fluid-soundfont-gm \
	  || { $(SUDO) apt-get update -qq && $(APT) libfluidsynth3 fluid-soundfont-gm; }
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,soundfont]'

browser: $(STAMP)  ## auralgen listen's browser test: Chromium and its driver (Debian packages; root or sudo), Selenium
	@dpkg -s chromium chromium-driver >/dev/null 2>&1 || $(APT) chromium chromium-driver \
	  || { $(SUDO) apt-get update -qq && $(APT) chromium chromium-driver; }
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,listen-test]'

golden: $(STAMP)  ## check the golden suites against tests/golden/ (shard SHA-256, or on another CPU the fingerprints; workers 1 and 2)
	$(BIN)/python bench/golden.py check default fast
	$(BIN)/python bench/golden.py check default --workers 2

eval: $(STAMP)  ## score the baselines on data/default into results/ (+ results/leaderboard.md, with the audio-free controls trained on seed 1)
	@test -f data/default/manifest.json || $(BIN)/python generate.py
	@test -f data/default_seed1/manifest.json || $(BIN)/python generate.py seed=1 out=data/default_seed1 progress=false
	@for m in random constant text_only dsp noise; do \
	  $(BIN)/python evaluate.py model=$$m data=data/default out=results/$$m leaderboard=results/leaderboard.md progress=false || exit $$?; \
	done
	$(BIN)/python -m auralgen.evaluation.controls_board data/default_seed1 data/default --leaderboard results/leaderboard.md

bench: $(STAMP)  ## print speed and memory figures (bench/; installs the bench extra: the transform references)
	$(BIN)/pip install -q -c constraints.txt -e '.[dev,bench]'
	$(BIN)/python bench/run.py

lint: $(STAMP)  ## ruff lint and format check; import layers (.importlinter); the docs site builds strictly
	$(BIN)/ruff check auralgen tests bench examples docs/hooks.py docs/scripts generate.py evaluate.py
	$(BIN)/ruff format --check auralgen tests bench examples docs/hooks.py docs/scripts generate.py evaluate.py
	$(BIN)/lint-imports --no-cache
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet   # into site/; no broken link or reference

docs: $(STAMP)  ## build the documentation site into site/ (reference pages: python docs/scripts/gen_reference.py)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(STAMP)  ## serve the documentation site on http://127.0.0.1:8000 (rebuilds on change)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8000

clean:  ## remove generated data, caches and the venv
	rm -rf data results outputs multirun .auralgen_cache $(VENV)
