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

venv_ok() {  # is .venv whole: a Python >= 3.11 that runs, and its pip?
  [[ -x .venv/bin/python && -x .venv/bin/pip ]] && python_ok .venv/bin/python &&
    .venv/bin/python -m pip --version >/dev/null 2>&1
}

ensure_venv() {  # create .venv (again, if it is missing, half made, broken or on an older Python)
  venv_ok && return 0
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
    printf '== .venv is incomplete, broken or older than Python 3.11: recreating it with %s\n' \
      "$py" >&2
    rm -rf .venv
  fi
  if ! "$py" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    local ver
    ver="$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    printf '%s has no venv/ensurepip module; install it and run this again\n' "$py" >&2
    printf '  (Debian/Ubuntu: sudo apt-get install python%s-venv; Fedora: sudo dnf install python3)\n' \
      "$ver" >&2
    return 1
  fi
  if ! "$py" -m venv .venv || ! .venv/bin/python -m pip install -q --disable-pip-version-check \
    --upgrade pip >/dev/null; then
    rm -rf .venv   # never leave a half-made .venv for the next run to trip over
    printf 'could not create .venv with %s (see above); nothing was installed\n' "$py" >&2
    return 1
  fi
}
