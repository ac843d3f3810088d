# Two commands for a fresh machine with Python 3.11, 3.12 or 3.13 and make: `make run` and `make test`; `make help`
# lists the rest.
PYTHON ?= $(shell command -v python3.11 || command -v python3.12 || command -v python3.13 || command -v python3)
# VENV: the environment make installs into and runs from. Conda users who created the pinned
# environment (environment.yml) pass the active one instead of a second .venv: make run VENV=$$CONDA_PREFIX
VENV ?= .venv
BIN := $(VENV)/bin
# EXTRAS: what the environment installs on top of the package's runtime (pyproject.toml): dev is every extra
EXTRAS ?= dev
PROFILE ?= fast
WORKERS ?= 2
SCHEDULER ?=
ONLY ?=
P ?=
CLAIMS ?=
OUTPUT ?=
NOTEBOOKS := $(wildcard notebooks/*.ipynb)
PYVER = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
STAMP := $(BIN)/.installed

# make run and make paper-check refuse a variable given on the command line that they do not use (a misspelt
# OLNY=dppro would otherwise run every notebook), before anything is installed or run.
RUN_VARIABLES := PROFILE WORKERS SCHEDULER ONLY P CLAIMS OUTPUT VENV PYTHON EXTRAS
COMMAND_LINE_VARIABLES = $(strip $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v))))
refuse_unused = $(if $(filter $(1),$(MAKECMDGOALS)),$(if $(filter-out $(2),$(COMMAND_LINE_VARIABLES)),\
  $(error make $(1) does not use $(filter-out $(2),$(COMMAND_LINE_VARIABLES)); it takes $(2) (make help))))
$(call refuse_unused,run,$(RUN_VARIABLES))
$(call refuse_unused,paper-check,WORKERS SCHEDULER VENV PYTHON EXTRAS)

.PHONY: help run test check venv student notebook format constraints benchmark clean book book-check lab paper-check fuzz

## make help: these lines (every target with its variables)
help:
	@echo "usage: make TARGET [VARIABLE=value ...]"
	@sed -n -e 's/^## \(make .*\)/\1/p' -e 's/^## /    /p' $(firstword $(MAKEFILE_LIST))
	@echo "every target: VENV=.venv (the environment to install into and run from), PYTHON=python3.11 (3.11-3.13),"
	@echo "EXTRAS=dev (the extras of pyproject.toml it installs)"

# Rebuilt when pyproject.toml or constraints.txt change, and when the environment was made by another Python than
# $(PYTHON) (a .venv left by an unsupported or older Python is replaced; a VENV you passed is never deleted).
# uv (pinned, from PyPI) installs the pinned set in about 5 s, then compileall compiles its bytecode on every core,
# leaving out the packages' own test suites (a third of the files, never imported here): 30 s against 34 s for uv's
# --compile-bytecode, which compiles everything; pip, which takes about 80 s and compiles on one core, installs it
# where uv cannot. Compiled bytecode matters here: where PYTHONDONTWRITEBYTECODE is set (as on this project's machines)
# Python caches nothing it compiles, so every kernel and worker the tests start would compile NumPy, SciPy and the rest
# from source again (dppro's nbval: 45 s against 33 s).
$(STAMP): pyproject.toml constraints.txt $(if $(wildcard $(STAMP)),$(if $(filter $(PYVER),$(shell cat $(STAMP))),,FORCE))
	@$(PYTHON) -c 'import sys; v = sys.version_info[:2]; sys.exit(0 if (3, 11) <= v < (3, 14) else "dpnb supports Python 3.11, 3.12 and 3.13; $(PYTHON) is %d.%d: run make PYTHON=/path/to/python3.13" % v)'
	@if [ -x $(BIN)/python ] && [ "$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" != "$(PYVER)" ]; then \
	  if [ "$(VENV)" = .venv ]; then echo "$(VENV) was made by another Python than $(PYTHON) ($(PYVER)): rebuilding it"; rm -rf $(VENV); \
	  else echo "$(VENV) runs another Python than $(PYTHON) ($(PYVER)): run make PYTHON=$(VENV)/bin/python"; exit 2; fi; fi
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt uv && \
	  $(BIN)/python -m uv pip install --quiet --python $(BIN)/python -c constraints.txt -e '.[$(EXTRAS)]' && \
	  { $(BIN)/python -m compileall -q -j 0 -x '/site-packages/(.*/)?tests?/' "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || \
	    echo "the files above did not compile to bytecode: Python compiles them when they are imported"; } || \
	  { echo "uv could not install the environment: installing it with pip"; \
	    $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[$(EXTRAS)]'; }
	@echo $(PYVER) > $@

FORCE:

venv: $(STAMP)

## make run [PROFILE=fast|paper] [ONLY="stem ..."] [P="name value ..."] [WORKERS=2] [SCHEDULER=tcp://host:port]
## [CLAIMS=1] [OUTPUT=dir]: execute the notebooks (parameters injected as papermill does) into results/<profile>
## (with P: results/<profile>+<name>=<value>...); prints a progress bar, the verdict counts per notebook and the
## failures; the per-claim table goes to claims.md there (CLAIMS=1 prints it too)
run: venv
	$(BIN)/python -m dpnb.tools.run --profile $(PROFILE) --workers $(WORKERS) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
	  $(if $(strip $(ONLY)),--only $(ONLY)) $(if $(strip $(P)),--parameters "$$P") $(if $(CLAIMS),--claims) \
	  $(if $(OUTPUT),--output $(OUTPUT))

## make test: lint (code and format, notebooks included), then one pytest session on two workers: the unit tests, a
## papermill run of every notebook on one emulated other machine (every reduction reordered, Piledriver kernels) that
## must reproduce the committed outputs and verdicts, and nbval on another (Prescott kernels, a kernel started with two
## BLAS threads, NumPy's SIMD off); the book builds meanwhile
test: venv
	$(BIN)/ruff check dpnb tests benchmarks book notebooks/bug_reports $(NOTEBOOKS)
	$(BIN)/ruff format --check dpnb tests benchmarks book notebooks/bug_reports $(NOTEBOOKS)
	$(BIN)/python -m dpnb.tools.portability kernelspec prescott-2threads-nosimd build/kernels
	@# the book (one core, from the committed notebooks) builds beside the tests, its output printed after theirs
	($(MAKE) --no-print-directory book > build/book.log 2>&1; echo $$? > build/book.status) & \
	JUPYTER_PATH=$(CURDIR)/build/kernels $(BIN)/python -m pytest -n 2 tests $(NOTEBOOKS) \
	  --nbval --nbval-kernel-name dpnb-prescott-2threads-nosimd --nbval-sanitize-with tests/sanitize.cfg; \
	tests=$$?; wait; cat build/book.log; book=$$(cat build/book.status); \
	[ $$tests = 0 ] && [ "$$book" = 0 ] || { echo "make test: pytest exit $$tests, book exit $$book"; exit 1; }

## make check: the quick loop (under 90 s on 2 idle cores): make test's lint, then every test that executes no notebook
## or kernel and is not marked slow (pytest -m "not notebook and not slow"); make test runs them all
check: venv
	$(BIN)/ruff check dpnb tests benchmarks book notebooks/bug_reports $(NOTEBOOKS)
	$(BIN)/ruff format --check dpnb tests benchmarks book notebooks/bug_reports $(NOTEBOOKS)
	$(BIN)/python -m pytest -n 2 -m "not notebook and not slow" tests

## make fuzz [FUZZ_EXAMPLES=60]: the property tests of every public release with a large random budget; prints
## entry point x cases x failures (not part of make test, which runs them derandomised with a small budget)
FUZZ_EXAMPLES ?= 60
fuzz: venv
	rm -rf build/fuzz
	-DPNB_HYPOTHESIS_PROFILE=fuzz DPNB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) DPNB_FUZZ_REPORT=build/fuzz \
	  $(BIN)/python -m pytest -n 2 -q -p no:cacheprovider tests/papers/test_properties.py
	$(BIN)/python tests/properties_report.py build/fuzz

## make paper-check: the paper profile's run (times in notebooks/profiles/wall_seconds.yml; not part of make test) and its verdicts
## against the committed tests/expected_verdicts/paper/<stem>.json
paper-check: venv
	$(BIN)/python -m dpnb.tools.run --profile paper --output results/paper --workers $(WORKERS) \
	  $(if $(SCHEDULER),--scheduler $(SCHEDULER))
	$(BIN)/python -m dpnb.reporting.claims results/paper/claims.json tests/expected_verdicts/paper

## make student: the student edition in build/student: every chapter without its solutions (notebooks/<stem>.md and .ipynb,
## the exercises kept) and the book built from them, checked to show no solution
student: venv
	$(BIN)/python -m dpnb.tools.student --output build/student

## make notebook NB=dppro: rebuild notebooks/NB.ipynb from notebooks/NB.md and execute it
notebook: venv
	@test -n "$(NB)" || (echo "usage: make notebook NB=<stem>"; exit 2)
	$(BIN)/python -m dpnb.tools.pairing notebooks/$(NB).md

## make format: ruff format over the package, tests and the notebooks' code (the .md sources take the formatted
## code through their .ipynb pairs, outputs kept)
format: venv
	$(BIN)/ruff format dpnb tests benchmarks book notebooks/bug_reports
	$(BIN)/jupytext --quiet --sync $(NOTEBOOKS)
	$(BIN)/ruff format $(NOTEBOOKS)
	$(BIN)/jupytext --quiet --sync $(NOTEBOOKS)

## make book: the course book as an HTML site from the committed notebooks (no execution, offline)
book: venv
	$(BIN)/python book/verdicts.py
	$(BIN)/jupyter-book build . --config book/_config.yml --toc book/_toc.yml --path-output build/book \
	  --builder html -W -n --keep-going -q
	@echo "open build/book/_build/html/index.html"

## make book-check: render the built book in headless Chromium (Debian's package) and check it
## (Chromium missing: make book-check INSTALL_CHROMIUM=1 installs Debian's package with apt-get, as root)
book-check: book
	@command -v chromium >/dev/null || [ "$(INSTALL_CHROMIUM)" = 1 ] || \
	  (echo "make book-check needs Chromium: apt-get install chromium, or make book-check INSTALL_CHROMIUM=1"; exit 2)
	@command -v chromium >/dev/null || (echo "installing Debian's chromium with apt-get" && \
	  apt-get update -qq && apt-get install -y -qq chromium)
	$(BIN)/python book/check.py

## make lab: JupyterLab on notebooks/, the chapters' .md sources opening as notebooks with MyST rendered
## (lab/user-settings; lab/jupyter_server_config.json hides the authoring guide, a Markdown file that is no notebook)
lab: venv
	JUPYTERLAB_SETTINGS_DIR=$(CURDIR)/lab/user-settings $(BIN)/jupyter lab --config=$(CURDIR)/lab/jupyter_server_config.json \
	  --notebook-dir=$(CURDIR)/notebooks $(if $(filter 0,$(shell id -u)),--allow-root)

## make benchmark: timing and memory of the mechanisms, every fit against its own floor and X^T X, PPCA beside diffprivlib, the sweep's
## 1 -> 2 worker speed-up beside the machine's own ceilings, a float32 factorisation with subnormals flushed or not, and each
## estimator's first fit on a fresh machine (numba compiling) against a warm one (not part of make test)
benchmark: venv
	$(BIN)/python -m benchmarks
	$(BIN)/python -m benchmarks.gram_floor
	$(BIN)/python -m benchmarks.ppca_peers
	$(BIN)/python -m benchmarks.bench_sweep
	$(BIN)/python -m benchmarks.subnormals
	$(BIN)/python -m benchmarks.first_fit

## make constraints: re-pin every dependency after changing pyproject.toml
## (the optional build-data extra is installed first, so its pins are kept)
constraints: venv
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,build-data]'
	(echo "# Exact versions for reproducible notebook outputs. Regenerate with: make constraints"; \
	 $(BIN)/python -m pip freeze --exclude-editable | sort -f) > constraints.txt

## make clean: remove results/ (every profile's) and pytest's cache
clean:
	rm -rf results .pytest_cache
