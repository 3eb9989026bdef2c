#!/usr/bin/env bash
# Sets up everything (scripts/setup.sh), then runs lint, the strict type check and the whole test suite:
# core, thread stores, the Claude and Codex drivers on their real CLIs against local fake model servers,
# notebooks under nbval, kernel comm tests and browser tests in JupyterLab + Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "== mypy --strict"
.venv/bin/mypy

echo "== pytest"
mkdir -p artifacts
set +e
.venv/bin/python -m pytest -p no:cacheprovider --junitxml=artifacts/junit.xml "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$status"
