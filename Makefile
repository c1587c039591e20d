# caffe2rnn: `make demo` runs the main job, `make test` runs every test.
# Both set everything up first (a virtual environment in .venv that can see
# the system's packages, the Python dependencies, the generated protobuf
# module, the Cython kernels and Graphviz's `dot` binary when it can be installed).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.caffe2rnn-setup

.PHONY: setup demo test test-fast lint ext bench docs site-check clean fuzz

setup: $(STAMP)

# scripts/setup.sh does it (one setup at a time in a checkout: a target started while
# another `make setup` runs waits for it; the kernels are compiled once).
$(STAMP): requirements-dev.txt pyproject.toml setup.py caffe2rnn/proto/caffe2.proto $(wildcard _ext/*.pyx _ext/*.pxd _ext/*.pxi)
	@bash scripts/setup.sh "$(PYTHON)" "$(VENV)" "$@" $^

ext: setup
	$(PY) setup.py -q build_ext --inplace --force

demo: setup
	$(PY) -m caffe2rnn demo --out demo-out

# Every RNN, cell and kernel test runs on both kernel paths (the `kernel_path`
# fixture of tests/conftest.py gives each such test a `python` and a `cython` id).
# The 2017 seed texts (scraped versions of Caffe2's recurrent.py) are not part of
# this repository; the tests that execute them read the folder $CAFFE2RNN_SEEDS names
# (default: a sibling checkout's shared/seeds when present) and skip with a reason otherwise.
CAFFE2RNN_SEEDS ?= $(abspath $(wildcard ../shared/seeds))
export CAFFE2RNN_SEEDS

# Caffe2's own source at each era's commit (read-only, never copied here): Caffe2's test
# files, tutorials and programs run from these folders. By default a sibling checkout's
# shared/caffe2/E* (see docs/caffe2-tests.md); set a variable to another checkout (the folder
# that holds caffe2/) to override it, or to the empty string to skip that era's suites.
CAFFE2_SOURCE_E4 ?= $(abspath $(wildcard ../shared/caffe2/E4))
CAFFE2_SOURCE    ?= $(abspath $(wildcard ../shared/caffe2/E5))
CAFFE2_SOURCE_E6 ?= $(abspath $(wildcard ../shared/caffe2/E6))
CAFFE2_SOURCE_E7 ?= $(abspath $(wildcard ../shared/caffe2/E7))
export CAFFE2_SOURCE_E4 CAFFE2_SOURCE CAFFE2_SOURCE_E6 CAFFE2_SOURCE_E7

test: setup lint
	$(PY) -m pytest -q -p no:cacheprovider tests

# For your own iterations: everything but Caffe2's test files, the docs build and notebooks,
# the fuzzers and the packaging builds (a few minutes instead of ~25); no lint.
test-fast: setup
	$(PY) -m pytest -q -p no:cacheprovider -x -m "not slow and not packaging" \
	  --ignore=tests/caffe2_suites --ignore=tests/docs --ignore=tests/fuzz tests

# Lint, format and types: the same tools and settings as .pre-commit-config.yaml.
LINTERS := ruff cython-lint pycodestyle mypy
lint: setup
	@for tool in $(LINTERS); do test -x $(VENV)/bin/$$tool || { \
	  echo "caffe2rnn: '$$tool' is missing from $(VENV); install the dev tools with:"; \
	  echo "  $(PY) -m pip install -r requirements-dev.txt"; exit 1; }; done
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/cython-lint _ext
	$(VENV)/bin/mypy

# Every fuzzer in tests/fuzz, scaled to at least 10,000 cases (deterministic;
# CAFFE2RNN_FUZZ_RANDOM=1 explores new ones); ends with one summary line.
fuzz: setup
	CAFFE2RNN_FUZZ_EXAMPLES=$${CAFFE2RNN_FUZZ_EXAMPLES:-400} CAFFE2RNN_FUZZ_MIN_CASES=10000 \
	  $(PY) -m pytest -q -p no:cacheprovider tests/fuzz

bench: setup
	$(PY) benchmarks/bench_kernels.py
	$(PY) benchmarks/bench_forward_only_memory.py
	$(PY) benchmarks/bench_lstm.py
	$(PY) benchmarks/bench_dispatch.py

# The docs tools (Sphinx, MyST-NB, the theme) come with requirements-dev.txt.
# Notebooks are executed during the build (cached in docs/_build/.jupyter_cache).
docs: setup
	$(PY) -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html (or: $(PY) -m http.server -d docs/_build/html)"

# Open the built site in headless Chromium: page titles, SVGs, screenshots.
site-check: docs
	$(PY) scripts/check_site.py

clean:
	rm -rf build caffe2rnn/_ext/*.so _ext/*.c caffe2rnn/proto/caffe2_pb2.py demo-out run-out docs/_build docs/notebooks docs/_static/diagrams

# JupyterLab on ./notebooks, running in this project's environment: JupyterLab is
# installed into .venv on first use and the kernel registered (inside .venv, nothing
# written to your home directory) as "caffe2rnn (.venv)", so notebooks import caffe2rnn
# (and protobuf, the kernels) without any other setup.
# It also offers the "Caffe2 (caffe2rnn)" kernels (one per era; installed into .venv by
# setup), in which Caffe2's own tutorials run unchanged: open them with
#   make lab NOTEBOOK_DIR=../shared/caffe2/E7/caffe2/python/tutorials
# (docs/caffe2-tutorials.md).
NOTEBOOK_DIR ?= notebooks
.PHONY: lab
lab: setup
	@$(PY) -c "import jupyterlab" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check "jupyterlab>=4" "ipywidgets>=8"
	$(PY) -m ipykernel install --sys-prefix --name caffe2rnn --display-name "caffe2rnn (.venv)"
	$(PY) -m caffe2rnn.compat.kernel install --sys-prefix >/dev/null
	$(PY) -m jupyter lab --notebook-dir=$(NOTEBOOK_DIR)

# One notebook without a notebook server: `make run STEP=9` runs the notebook of step 9 of
# the site's path (notebooks/04_*.ipynb; `make run NB=04` names it by its file) as it is on
# disk (with the answers you wrote into it) and prints what each cell printed; the worked
# answers' output is left out unless ANSWERS=1. Predictions without editing the notebook:
# PRED='predicted_lists=...' (several: separated by ;) or ANSWERS_FILE=my_answers.py;
# REVEAL=1 shows a wrong one's answer and why. PRED reaches the script through the
# environment (make exports command-line variables), so its quotes stay as typed.
NB ?=
STEP ?=
.PHONY: run
run: setup
	@test -n "$(NB)$(STEP)" || { echo "make run: say which step, e.g. make run STEP=9 (or which notebook file: NB=04)"; exit 2; }
	@$(PY) scripts/run_notebook.py $(if $(STEP),--step "$(STEP)",$(NB)) $(if $(ANSWERS),--answers) $(if $(REVEAL),--reveal) $(if $(PRED),--pred "$$PRED") $(if $(ANSWERS_FILE),--answers-file "$(ANSWERS_FILE)")
