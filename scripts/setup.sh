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
AGUI_CLIENT_VERSION=1.0.0

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
# The package is installed editable, so code changes need no reinstall; pyproject.toml changes do. A stamp in
# .venv records what was installed from which pyproject.toml, and a run with nothing changed skips pip entirely.
if [ "$MINIMAL" = 1 ]; then EXTRAS="demo"; else EXTRAS="pandas,plot,demo,test,dask,codebuddy,tools,postgres,acp,agui"; fi
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1) $EXTRAS"
STAMP=.venv/.adaptor_nb-installed
covered() {  # the stamp's install holds every extra asked for now (the full install covers the demo's)
  [ -f "$STAMP" ] || return 1
  read -r have_hash have_extras < "$STAMP"
  [ "$have_hash" = "${WANT%% *}" ] || return 1
  for extra in ${EXTRAS//,/ }; do
    case ",$have_extras," in *",$extra,"*) ;; *) return 1 ;; esac
  done
}
if covered && .venv/bin/python -c "import adaptor_nb" 2>/dev/null; then
  echo "== adaptor_nb is installed with [$EXTRAS] and pyproject.toml is unchanged: skipping pip"
else
  .venv/bin/python -m pip install -q --upgrade pip
  echo "== installing adaptor_nb with the extras [$EXTRAS]"
  .venv/bin/python -m pip install -q -e ".[$EXTRAS]"
  echo "$WANT" > "$STAMP"
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
# The official AG-UI client, for the bridge's tests (a prefix of its own, so it never touches the CLIs above).
if ! grep -q "\"version\": \"$AGUI_CLIENT_VERSION\"" .cache/npm-agui/node_modules/@ag-ui/client/package.json 2>/dev/null; then
  echo "== installing the pinned @ag-ui/client into .cache/npm-agui"
  mkdir -p .cache/npm-agui
  (cd .cache/npm-agui && [ -f package.json ] || echo '{"name":"adaptor-nb-agui-client","private":true}' > package.json)
  npm install --prefix "$ROOT/.cache/npm-agui" --no-audit --no-fund --loglevel=error "@ag-ui/client@$AGUI_CLIENT_VERSION"
fi
echo "== setup done"
