#!/usr/bin/env bash
# Make sure Graphviz's `dot` binary is on PATH (the Python `graphviz` package
# only writes DOT text; rendering SVG/PNG needs the binary from the OS).
# Never fails the build: without `dot`, diagrams still produce DOT source and
# the rendering tests are skipped with a reason.
if command -v dot >/dev/null 2>&1; then
  exit 0
fi
echo "caffe2rnn: Graphviz 'dot' not found; trying to install it..."
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null) \
    && command -v dot >/dev/null 2>&1 && { echo "caffe2rnn: installed graphviz with apt-get"; exit 0; }
elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  (sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null) \
    && command -v dot >/dev/null 2>&1 && { echo "caffe2rnn: installed graphviz with sudo apt-get"; exit 0; }
elif command -v brew >/dev/null 2>&1; then
  brew install graphviz && exit 0
elif command -v conda >/dev/null 2>&1; then
  conda install -y -c conda-forge graphviz && exit 0
fi
cat <<'MSG'
caffe2rnn: could not install Graphviz's `dot` binary automatically.
  Diagrams still work as DOT text, and tests that render are skipped.
  To render SVG/PNG, install it yourself, e.g.:
    Debian/Ubuntu:  sudo apt-get install graphviz
    macOS:          brew install graphviz
    conda:          conda install -c conda-forge graphviz
MSG
exit 0
