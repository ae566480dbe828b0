#!/usr/bin/env bash
# Install the ACP client the ACP tests drive: acpx from npm, pinned, into .tools/acpx.
# Idempotent: a second run only checks the version and exits.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${OPENPROGRAM_TOOLS_DIR:-$ROOT/.tools}"
ACPX_VERSION="${ACPX_VERSION:-0.19.1}"
DIR="$TOOLS/acpx"
BIN="$DIR/node_modules/.bin/acpx"
# shellcheck source=lib/lock.sh
source "$ROOT/scripts/lib/lock.sh"
install_lock install-acpx "$TOOLS"   # the acpx tests wait on it (tests/acp/acpx.py)

if [[ -x "$BIN" ]] && [[ "$("$BIN" --version 2>/dev/null)" == "$ACPX_VERSION" ]]; then
  exit 0
fi
command -v npm >/dev/null || { echo "install-acpx: npm is needed" >&2; exit 1; }
echo "[install-acpx] npm install acpx@$ACPX_VERSION into $DIR" >&2
mkdir -p "$DIR"
[[ -f "$DIR/package.json" ]] || printf '{"name":"openprogram-acpx","private":true}\n' >"$DIR/package.json"
(cd "$DIR" && npm install --no-save --no-audit --no-fund --loglevel=error "acpx@$ACPX_VERSION")
"$BIN" --version >/dev/null
