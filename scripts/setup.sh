#!/usr/bin/env bash
# Installs everything the project and its tests need into the repo: a virtualenv in .venv (the package with all
# extras), the pinned agent CLIs in .cache/npm, Debian's chromium for browser tests and Debian's postgresql for the
# Postgres thread store tests (a throwaway server each run). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

CLAUDE_VERSION=2.1.197
CODEX_VERSION=0.171.0
QWEN_VERSION=0.24.4
CODEX_ACP_VERSION=0.16.0

MINIMAL=${ADAPTOR_NB_SETUP_MINIMAL:-0}  # 1: only the Python package (enough for the demo notebook)

if [ "$MINIMAL" != 1 ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "== installing Debian chromium"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "warning: chromium is missing and this is not root; browser tests will be skipped" >&2
  fi
fi

# The thread store tests start a throwaway PostgreSQL server from Debian's binaries (/usr/lib/postgresql/*/bin).
if [ "$MINIMAL" != 1 ] && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    echo "== installing Debian postgresql"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "warning: PostgreSQL is missing and this is not root; the Postgres store tests will fail: apt-get install postgresql" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
if [ "$MINIMAL" = 1 ]; then
  echo "== installing adaptor_nb with the demo extras"
  .venv/bin/python -m pip install -q -e ".[demo]"
else
  echo "== installing adaptor_nb with all extras"
  .venv/bin/python -m pip install -q -e ".[pandas,plot,demo,test,dask,codebuddy,tools,postgres,acp]"
fi

if [ "$MINIMAL" = 1 ]; then
  echo "== setup done (python only)"
  exit 0
fi

mkdir -p .cache/npm
if [ ! -x .cache/npm/node_modules/.bin/claude ] || [ ! -x .cache/npm/node_modules/.bin/codex ] \
   || ! grep -q "\"version\": \"$CLAUDE_VERSION\"" .cache/npm/node_modules/@anthropic-ai/claude-code/package.json 2>/dev/null \
   || ! grep -q "\"version\": \"$CODEX_VERSION\"" .cache/npm/node_modules/@openai/codex/package.json 2>/dev/null; then
  echo "== installing the pinned agent CLIs into .cache/npm"
  (cd .cache/npm && [ -f package.json ] || echo '{"name":"adaptor-nb-cli-cache","private":true}' > package.json)
  npm install --prefix "$ROOT/.cache/npm" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION"
fi
if [ ! -x .cache/npm/node_modules/.bin/qwen ] || [ ! -x .cache/npm/node_modules/.bin/codex-acp ] \
   || ! grep -q "\"version\": \"$QWEN_VERSION\"" .cache/npm/node_modules/@qwen-code/qwen-code/package.json 2>/dev/null \
   || ! grep -q "\"version\": \"$CODEX_ACP_VERSION\"" .cache/npm/node_modules/@zed-industries/codex-acp/package.json 2>/dev/null; then
  echo "== installing the pinned ACP agents into .cache/npm"
  (cd .cache/npm && [ -f package.json ] || echo '{"name":"adaptor-nb-cli-cache","private":true}' > package.json)
  npm install --prefix "$ROOT/.cache/npm" --no-audit --no-fund --loglevel=error \
    "@qwen-code/qwen-code@$QWEN_VERSION" "@zed-industries/codex-acp@$CODEX_ACP_VERSION"
fi
echo "== setup done"
