#!/usr/bin/env bash
# Sets up the package and runs notebooks/quickstart.ipynb end to end on the default driver (Claude or Codex when
# installed and usable, else the offline reference driver), leaving the executed notebook and an HTML export in
# artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

ADAPTOR_NB_SETUP_MINIMAL=1 bash scripts/setup.sh

mkdir -p artifacts
.venv/bin/jupyter nbconvert --to notebook --execute notebooks/quickstart.ipynb \
  --ExecutePreprocessor.timeout=600 --output-dir artifacts --output quickstart.executed.ipynb
.venv/bin/jupyter nbconvert --to html artifacts/quickstart.executed.ipynb --output-dir artifacts --output quickstart.html
echo "executed notebook: artifacts/quickstart.executed.ipynb"
echo "HTML export:       artifacts/quickstart.html"
