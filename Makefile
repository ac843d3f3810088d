# Two commands for a fresh machine with Python 3.11 and make: `make run` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= fast
WORKERS ?= 2
SCHEDULER ?=
NOTEBOOKS := $(wildcard notebooks/*.ipynb)

.PHONY: run test venv notebook constraints benchmark clean book book-check lab fuzz

$(BIN)/.installed: pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -c 'import sys; assert sys.version_info[:2] == (3, 11), "dpnb needs Python 3.11; run make PYTHON=/path/to/python3.11"'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e .
	@touch $@

venv: $(BIN)/.installed

## make run [PROFILE=fast|paper] [WORKERS=2] [SCHEDULER=tcp://host:port]: execute every notebook with papermill into results/
run: venv
	$(BIN)/python -m dpnb.run --profile $(PROFILE) --output results --workers $(WORKERS) $(if $(SCHEDULER),--scheduler $(SCHEDULER))

## make test: lint, unit tests and papermill runs on an emulated other machine, nbval on a third, the book
test: venv
	$(BIN)/ruff check dpnb tests benchmarks book $(NOTEBOOKS)
	$(BIN)/ruff format --check dpnb tests benchmarks book
	$(BIN)/python -m pytest -n 2 tests
	$(BIN)/python -m dpnb.portability exec prescott-2threads-nosimd \
	  $(BIN)/python -m pytest -n 2 --dist loadfile --nbval --nbval-sanitize-with tests/sanitize.cfg -p no:cacheprovider $(NOTEBOOKS)
	$(MAKE) --no-print-directory book

## make fuzz [FUZZ_EXAMPLES=60]: the property tests of every public release with a large random budget; prints
## entry point x cases x failures (not part of make test, which runs them derandomised with a small budget)
FUZZ_EXAMPLES ?= 60
fuzz: venv
	rm -rf build/fuzz
	-DPNB_HYPOTHESIS_PROFILE=fuzz DPNB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) DPNB_FUZZ_REPORT=build/fuzz \
	  $(BIN)/python -m pytest -n 2 -q -p no:cacheprovider tests/test_properties.py
	$(BIN)/python tests/properties_report.py build/fuzz

## make notebook NB=dppro: rebuild notebooks/NB.ipynb from notebooks/NB.md and execute it
notebook: venv
	@test -n "$(NB)" || (echo "usage: make notebook NB=<stem>"; exit 2)
	$(BIN)/python -m dpnb.pairing notebooks/$(NB).md

## make book: the course book as an HTML site from the committed notebooks (no execution, offline)
book: venv
	$(BIN)/python book/verdicts.py
	$(BIN)/jupyter-book build . --config book/_config.yml --toc book/_toc.yml --path-output build/book \
	  --builder html -W -n --keep-going -q
	@echo "open build/book/_build/html/index.html"

## make book-check: render the built book in headless Chromium (Debian's package) and check it
book-check: book
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	$(BIN)/python book/check.py

## make lab: JupyterLab, with the notebooks' .md sources opening as notebooks (lab/user-settings)
lab: venv
	JUPYTERLAB_SETTINGS_DIR=$(CURDIR)/lab/user-settings $(BIN)/jupyter lab --notebook-dir=$(CURDIR) $(if $(filter 0,$(shell id -u)),--allow-root)

## make benchmark: timing and memory of the mechanisms, every fit against the Gram-matrix floor, and the sweep's
## 1 -> 2 worker speed-up beside the machine's own ceilings (not part of make test)
benchmark: venv
	$(BIN)/python -m benchmarks
	$(BIN)/python -m benchmarks.gram_floor
	$(BIN)/python -m benchmarks.bench_sweep

## make constraints: re-pin every dependency after changing pyproject.toml
constraints: venv
	(echo "# Exact versions for reproducible notebook outputs. Regenerate with: make constraints"; \
	 $(BIN)/python -m pip freeze --exclude-editable | sort -f) > constraints.txt

clean:
	rm -rf results .pytest_cache
