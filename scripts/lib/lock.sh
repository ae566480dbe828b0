# Sourced by the tool install scripts: one install of a tool at a time. scripts/test runs them
# in the background while the tests that need a tool run its install script too (or wait on its
# lock); those wait here for the running install, then find the tool installed.
# install_lock NAME DIR: hold DIR/.NAME.lock for the rest of this script (fd 9), 15 min at most.

install_lock() {
  mkdir -p "$2"
  command -v flock >/dev/null 2>&1 || return 0   # no util-linux (macOS): no lock
  exec 9>>"$2/.$1.lock"
  flock -w "${INSTALL_LOCK_TIMEOUT:-900}" 9 || {
    printf '[%s] another install held %s for %s s; giving up\n' "$1" "$2/.$1.lock" \
      "${INSTALL_LOCK_TIMEOUT:-900}" >&2
    return 1
  }
}
