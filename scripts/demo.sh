#!/usr/bin/env bash
# Sets up the package with JupyterLab (the demo extra; skipped when nothing changed), runs notebooks/quickstart.ipynb
# end to end on the default driver (Claude or Codex when installed and usable, else the offline reference driver),
# leaves the executed notebook and an HTML export in artifacts/, and prints how to open the notebooks.
set -euo pipefail
cd "$(dirname "$0")/.."

ADAPTOR_NB_SETUP_MINIMAL=1 bash scripts/setup.sh

mkdir -p artifacts
.venv/bin/jupyter nbconvert --to notebook --execute notebooks/quickstart.ipynb \
  --ExecutePreprocessor.timeout=600 --output-dir artifacts --output quickstart.executed.ipynb
.venv/bin/jupyter nbconvert --to html artifacts/quickstart.executed.ipynb --output-dir artifacts --output quickstart.html
cat <<'DONE'
executed notebook: artifacts/quickstart.executed.ipynb
HTML export:       artifacts/quickstart.html

Open the notebooks in JupyterLab (installed in .venv):
    .venv/bin/jupyter lab notebooks/
then open quickstart.ipynb and run Kernel > Restart Kernel and Run All Cells. The other notebooks there show
threads, approvals, structured output, live tool calls, batch extraction over a DataFrame and notebook tools.
Without a Claude or Codex CLI signed in, cells use the offline reference driver (its replies say they are scripted);
`%agent status` in a notebook says what to install or set for the others.
DONE
