#!/usr/bin/env bash
# `make setup` (and every make target that needs the environment):
#   scripts/setup.sh PYTHON VENV STAMP [FILE...]
# builds the virtual environment VENV with PYTHON, the Python dependencies of
# requirements-dev.txt, the generated protobuf module, the Cython kernels (compiled
# once, in place) and the editable install, then touches STAMP. The FILEs are what
# the setup is made from (make's prerequisites): a setup whose STAMP is newer than
# all of them is up to date.
#
# One setup at a time in a checkout: the lock is the folder .setup-lock (its `pid`
# file names the process holding it). A second `make setup`, `make run`, `make test`
# ... started meanwhile waits for the first to finish and, when that one succeeded,
# goes on without building anything; two pip installs never run into each other in
# one .venv. A lock whose process is gone (an interrupted setup) is taken over.
#
# pip's output goes to VENV/setup-pip.log; on success one line says how many notes
# it holds (on this kind of machine: pip config locations that do not exist, and
# packages of the system's Python that conflict with each other), on a failure its
# end is printed.
set -u
PYTHON=$1 VENV=$2 STAMP=$3
shift 3
PY=$VENV/bin/python
LOCK=${CAFFE2RNN_SETUP_LOCK:-.setup-lock}
started=$(date +%s)

say() { echo "caffe2rnn setup: $*"; }

up_to_date() {
  [ -f "$STAMP" ] || return 1
  local file
  for file in "$@"; do
    [ "$file" -nt "$STAMP" ] && return 1
  done
  return 0
}

holder() { cat "$LOCK/pid" 2>/dev/null; }

take_lock() {
  local waited=0 pid
  while ! mkdir "$LOCK" 2>/dev/null; do
    pid=$(holder)
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      say "taking over the lock of a setup that stopped (process $pid)"
      rm -rf "$LOCK"
      continue
    fi
    if [ "$waited" = 0 ]; then
      say "setup is running in this checkout (process ${pid:-?}); waiting for it to finish..."
      waited=1
    fi
    sleep 2
  done
  echo $$ >"$LOCK/pid"
  trap 'rm -rf "$LOCK"' EXIT
  trap 'exit 130' INT TERM
  [ "$waited" = 1 ]
}

if take_lock && up_to_date "$@"; then
  say "the other setup finished; going on"
  exit 0
fi

pip_quietly() { # pip ARGS..., its output kept in VENV/setup-pip.log
  local log=$VENV/setup-pip.log
  echo "\$ pip $*" >>"$log"
  if "$PY" -m pip "$@" --disable-pip-version-check >>"$log" 2>&1; then
    return 0
  fi
  echo "caffe2rnn: 'pip $*' failed; the end of $log:"
  tail -n 40 "$log"
  exit 1
}

test -x "$PY" || "$PYTHON" -m venv --system-site-packages "$VENV" || {
  echo "caffe2rnn: could not create a virtual environment with '$PYTHON -m venv'."
  echo "  Install the venv module (Debian/Ubuntu: sudo apt-get install python3-venv) or run with VENV pointing at an existing one."
  exit 1
}
"$PY" -m pip --version >/dev/null 2>&1 || {
  echo "caffe2rnn: $VENV has no pip: it is half-built (an interrupted 'make setup')."
  echo "  Remove it (rm -rf $VENV) and run 'make setup' again."
  exit 1
}
rm -f "$VENV/setup-pip.log"

say "[1/4] the Python packages of requirements-dev.txt (pip)"
pip_quietly install -q -r requirements-dev.txt

say "[2/4] the protobuf module and the Cython kernels (compiled once, in place)"
"$PY" setup.py -q build_ext --inplace || exit 1

# The editable install finds the kernels built above in caffe2rnn/_ext/; without
# CAFFE2RNN_NO_CYTHON it would compile every kernel again in a temporary folder.
say "[3/4] caffe2rnn itself (pip install -e .)"
CAFFE2RNN_NO_CYTHON=1 pip_quietly install -q --no-build-isolation --no-deps -e .

say "[4/4] the Jupyter kernels, Graphviz's dot"
"$PY" -m caffe2rnn.compat.kernel install --sys-prefix >/dev/null || exit 1
bash scripts/ensure-dot.sh

notes=$(grep -c -E '^(WARNING|ERROR)' "$VENV/setup-pip.log")
if [ "$notes" -gt 0 ]; then
  say "pip left $notes notes, none of which stopped it, in $VENV/setup-pip.log"
fi
touch "$STAMP"
elapsed=$(($(date +%s) - started))
say "done in $((elapsed / 60)) min $((elapsed % 60)) s"
