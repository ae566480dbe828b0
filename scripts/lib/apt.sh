# Sourced by the install scripts: install Debian packages with apt-get, saying so first,
# waiting for another apt/dpkg to finish instead of failing on its lock.
# apt_install LABEL PKG...   (returns non-zero when apt is missing or the install fails)

APT_LOCK_TIMEOUT="${APT_LOCK_TIMEOUT:-600}"

apt_missing() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
      || printf '%s\n' "$pkg"
  done
}

apt_install() {
  local label="$1"
  shift
  local missing
  mapfile -t missing < <(apt_missing "$@")
  ((${#missing[@]} == 0)) && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    printf '[%s] needs the system packages %s; install them with your package manager\n' \
      "$label" "${missing[*]}" >&2
    return 1
  fi
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    sudo=(sudo)
    printf '[%s] installing system packages with sudo apt-get: %s\n' "$label" \
      "${missing[*]}" >&2
  else
    printf '[%s] installing system packages with apt-get: %s\n' "$label" "${missing[*]}" >&2
  fi
  local opts=(-o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT" -y -qq)
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get "${opts[@]}" install "${missing[@]}" >/dev/null 2>&1; then
    # the package lists may be missing or stale; `update` takes the lists lock, so retry it
    local tries=0
    until "${sudo[@]}" apt-get -o "DPkg::Lock::Timeout=$APT_LOCK_TIMEOUT" -qq update; do
      tries=$((tries + 1))
      ((tries >= 20)) && return 1
      printf '[%s] apt-get update failed (another apt running?); retrying in 15 s\n' \
        "$label" >&2
      sleep 15
    done
    "${sudo[@]}" apt-get "${opts[@]}" install "${missing[@]}"
  fi
}
