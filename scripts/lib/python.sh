# Sourced by scripts/quickstart and scripts/test: a .venv on Python >= 3.11.

python_ok() {  # python_ok EXE: is it Python 3.11 or newer?
  "$1" -c 'import sys; raise SystemExit(sys.version_info < (3, 11))' 2>/dev/null
}

find_python() {
  local exe
  for exe in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [[ -n "$exe" ]] && command -v "$exe" >/dev/null 2>&1 && python_ok "$exe" && {
      command -v "$exe"
      return 0
    }
  done
  return 1
}

ensure_venv() {  # create .venv (again, if it is missing, broken or on an older Python)
  if [[ -x .venv/bin/python ]] && python_ok .venv/bin/python; then
    return 0
  fi
  local py
  if ! py="$(find_python)"; then
    local found
    found="$(python3 --version 2>&1 || echo 'no python3')"
    printf 'openprogram-lsp needs Python 3.11 or newer (found: %s); install python3.11 (or newer)\n' \
      "$found" >&2
    printf 'and run this again, or point PYTHON=/path/to/python3.11 at one\n' >&2
    return 1
  fi
  if [[ -e .venv ]]; then
    printf '== .venv is missing its Python or uses one older than 3.11: recreating it with %s\n' \
      "$py" >&2
    rm -rf .venv
  fi
  "$py" -m venv .venv || return 1
  .venv/bin/pip install -q --disable-pip-version-check --upgrade pip >/dev/null
}
