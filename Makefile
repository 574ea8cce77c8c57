# prism-companion: `make reproduce` regenerates every figure and table, `make test` runs the tests,
# `make report` writes report/$(PROFILE)/index.html (the executed notebooks as a static site),
# `make mutants` mutation-tests the verdict layer (MUTANTS=stats claims ...; slow, see README).
#   PROFILE=smoke|cpu|paper   run profile (default cpu)
#   EXECUTOR=local|inline|slurm  where the LSTM grid of notebooks 05-08 trains (default local:
#                             one single-thread worker process per core)
#   FRESH=1                   retrain work B's models instead of using their committed run records
#   V=1                       the data check lists every file (default: one summary line)
#   PRISMLIB_DEVICE=cuda      run any profile on this device (smoke's is cpu); see prismlib/profiles/
#   PRISMLIB_DATA=DIR         where the datasets are (default: ../shared/data when that offline
#                             copy exists beside the checkout, else ./data, filled by `make data`)
#   TORCH=...                 torch requirement installed first (default the pinned CPU build;
#                             GPU users: TORCH="torch --index-url https://download.pytorch.org/whl/cu124"
#                             or create the conda env of environment.yml)

PYTHON ?= python3
VENV   ?= .venv
PROFILE ?= cpu
TORCH  ?= torch==2.13.0
SHARED_DATA := $(abspath ../shared/data)
PRISMLIB_DATA ?= $(if $(wildcard $(SHARED_DATA)/SHA256SUMS),$(SHARED_DATA),$(abspath data))
export PRISMLIB_DATA

PY := $(VENV)/bin/python

.PHONY: all venv data reproduce test test-fast lint typecheck mutants report paired benchmark clean-results lab lab-settings
all: reproduce

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e ".[dev]"  # every extra: notebooks, report, cluster, data, bench
	$(MAKE) --no-print-directory lab-settings
	touch $@

# JupyterLab opens notebooks/*.py as notebooks (jupytext's default viewer, jupyter/overrides.json)
lab-settings:
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json

# JupyterLab on the notebooks; as root (most containers) it needs --allow-root, added only then.
# The file browser lists each notebook once, as its .py (opened as a notebook, with the outputs
# of its paired .ipynb): the .ipynb files are hidden from the listing, not from jupytext
LAB_HIDE := ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", "*.ipynb"]
lab: venv lab-settings
	$(VENV)/bin/jupyter lab notebooks --ContentsManager.hide_globs='$(LAB_HIDE)' $(if $(filter 0,$(shell id -u)),--allow-root,)

venv: $(VENV)/.installed

# the data check: fetches what is missing, verifies the rest; one summary line (V=1: every file)
V ?=
FETCH = $(PY) -m prismlib data fetch --profile $(PROFILE) $(if $(V),-v,)
data: venv
	$(FETCH)

# the LSTM grid of notebooks 05-08 first, in parallel worker processes (EXECUTOR=local|inline|slurm),
# then the notebooks; ONLY="01 02" runs those notebooks only (and trains the grid only for 05-08);
# a notebook whose result is current (same prismlib, notebook and device) is skipped unless FORCE=1;
# PROFILE, ONLY and the commit (ALLOW_DIRTY) are checked first, before the data check and any training
EXECUTOR ?= local
ONLY ?=
# FRESH=1: retrain work B's models from nothing instead of using the committed run records
# (results/<profile>/runs/; each retrained job rewrites its record)
FRESH ?=
export PRISMLIB_FRESH := $(FRESH)
WORK_B := $(if $(ONLY),$(filter 05% 06% 07% 08%,$(ONLY)),all)
reproduce: venv
	@$(PY) -m prismlib reproduce --check-args --profile $(PROFILE) $(if $(ONLY),--only $(ONLY),) $(if $(ALLOW_DIRTY),--allow-dirty,)
	$(FETCH)
	$(if $(WORK_B),$(PY) -m prismlib train --profile $(PROFILE) --executor $(EXECUTOR) $(if $(ONLY),--for-notebooks $(foreach n,$(WORK_B),$(firstword $(subst _, ,$(n)))),),@echo "ONLY=$(ONLY): no work-B notebook, no LSTM training")
	$(PY) -m prismlib reproduce --profile $(PROFILE) $(if $(ONLY),--only $(ONLY),) $(if $(FORCE),--force,) $(if $(ALLOW_DIRTY),--allow-dirty,)

test: venv
	PRISMLIB_PROFILE=smoke $(PY) -m pytest tests notebooks --nbval-lax -q

# the unit tests only: no notebooks, nothing marked slow (a few minutes; tests/<package>/ mirrors prismlib/)
test-fast: venv
	PRISMLIB_PROFILE=smoke $(PY) -m pytest tests -q -m "not slow"

# ruff's lint and format check (configured in pyproject.toml); `ruff format` and `ruff check --fix` repair most
LINTED := prismlib tests benchmarks notebooks
lint: venv
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)

# mypy on the package (configured in pyproject.toml: [tool.mypy])
typecheck: venv
	$(VENV)/bin/mypy

# mutation testing of the verdict layer (tests/mutants/run.py; slow, not part of `make test`):
# MUTANTS=stats claims bigram timescales memory convergence verdicts schedule artifacts (default: all)
MUTANTS ?=
mutants: venv
	PRISMLIB_PROFILE=smoke OMP_NUM_THREADS=1 $(PY) tests/mutants/run.py $(MUTANTS)

# static HTML site of results/$(PROFILE)/ (smoke without results/smoke/: the stored outputs of
# notebooks/*.ipynb); fails when a link in it does not resolve
report: venv
	$(PY) -m prismlib report --profile $(PROFILE) $(REPORT_FLAGS)

# re-execute notebooks/*.ipynb in place on the smoke profile (the outputs nbval checks)
paired: venv
	$(PY) -m prismlib reproduce --paired

benchmark: venv
	$(PY) benchmarks/spectral.py
	$(PY) benchmarks/lstm.py
	$(PY) benchmarks/prism.py

clean-results:
	rm -rf results/$(PROFILE) figures/$(PROFILE) report/$(PROFILE)
