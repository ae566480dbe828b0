#!/usr/bin/env bash
# Install what the VS Code end-to-end test needs: Debian packages (chromium, ripgrep and the
# toolchain code-server's native modules build with) and code-server from npm into .tools/.
# Idempotent: a second run only checks and exits. Works offline apart from apt and npm.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
TOOLS="${OPENPROGRAM_TOOLS_DIR:-$ROOT/.tools}"
CS_VERSION="${CODE_SERVER_VERSION:-4.100.3}"   # the last release whose engines.node is 20
RG_PKG_VERSION="1.15.11"                        # @vscode/ripgrep pinned by that code-server
RG_TARBALL="ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
CS_DIR="$TOOLS/code-server"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
APT_PACKAGES=(chromium ripgrep build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev
  libsecret-1-dev)

log() { printf '[install-e2e] %s\n' "$*" >&2; }

# shellcheck source=../../../scripts/lib/apt.sh
source "$ROOT/scripts/lib/apt.sh"
# shellcheck source=../../../scripts/lib/lock.sh
source "$ROOT/scripts/lib/lock.sh"

install_apt() {
  # says what it installs first, waits for another apt's lock instead of failing on it
  apt_install install-e2e "${APT_PACKAGES[@]}"
}

fill_ripgrep_cache() {
  # @vscode/ripgrep's postinstall downloads from GitHub; it first looks for this cached tarball.
  local cache="$1/vscode-ripgrep-cache-$RG_PKG_VERSION"
  [[ -f "$cache/$RG_TARBALL" ]] && return 0
  local stage
  stage="$(mktemp -d)"
  cp "$(command -v rg)" "$stage/rg"
  mkdir -p "$cache"
  tar czf "$cache/$RG_TARBALL" -C "$stage" rg
  rm -rf "$stage"
}

install_code_server() {
  if [[ -x "$CS_BIN" ]] && "$CS_BIN" --version 2>/dev/null | grep -q "^$CS_VERSION "; then
    return 0
  fi
  log "npm install code-server@$CS_VERSION into $CS_DIR (a few minutes)"
  mkdir -p "$CS_DIR" "$TOOLS/tmp"
  fill_ripgrep_cache "$TOOLS/tmp"
  [[ -f "$CS_DIR/package.json" ]] || printf '{"name":"openprogram-e2e-tools","private":true}\n' \
    >"$CS_DIR/package.json"
  # unsafe_perm: code-server's postinstall refuses root without it; yes: node-pty runs npx node-gyp;
  # build_from_source: node-pre-gyp modules (argon2) build here instead of first asking GitHub
  # for a binary, which only package registries may be reachable to refuse (31-165 s per run).
  (cd "$CS_DIR" && TMPDIR="$TOOLS/tmp" npm_config_unsafe_perm=true npm_config_yes=true \
    npm_config_build_from_source=true \
    npm install --no-save --foreground-scripts --loglevel=error "code-server@$CS_VERSION")
  "$CS_BIN" --version >/dev/null
}

install_lock install-e2e "$TOOLS"   # the tests run this too, beside scripts/test's own run
install_apt
install_code_server
log "ready: $("$CS_BIN" --version | head -1); $(chromium --version 2>/dev/null | head -1)"
