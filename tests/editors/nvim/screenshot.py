"""Regenerate docs/images/nvim-panel.png: real Neovim in tmux, the real server, a scripted model.

The pane (with its colours) is captured with ``tmux capture-pane -e``, turned into HTML here and
rendered by headless Chromium. Run: ``.venv/bin/python tests/editors/nvim/screenshot.py``.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PLUGIN = REPO / "editors" / "nvim"
OUT = REPO / "docs" / "images" / "nvim-panel.png"
COLS, ROWS = 150, 40
BG, FG = "#14161b", "#e0e2ea"  # Neovim's default dark scheme

SCRIPT = [
    {"delay": 0.03,
     "text": "I'll add a `greet` function to **hello.py** and call it from `main`, "
             "so the greeting is reusable.",
     "tool_calls": [{"name": "read_file", "arguments": {"path": "hello.py"}}]},
    {"text": "The file prints directly; here is the change:",
     "tool_calls": [{"name": "edit_file", "arguments": {
         "path": "hello.py",
         "old_text": 'def main():\n    print("hello")\n',
         "new_text": 'def greet(name: str) -> str:\n    return f"hello, {name}"\n\n\n'
                     'def main():\n    print(greet("world"))\n'}}]},
    {"text": "Done. `greet()` returns the text and `main()` prints it."},
]

HELLO = 'def main():\n    print("hello")\n\n\nif __name__ == "__main__":\n    main()\n'

LUA = """
require('openprogram').setup({ cmd = %(cmd)s, model = %(model)s,
  panel = { position = 'right', width = 72 } })
-- A small floating picker, standing in for a vim.ui.select plugin (dressing, snacks, ...).
vim.ui.select = function(items, opts, on_choice)
  local lines = {}
  for i, it in ipairs(items) do
    lines[i] = (' %%d  %%s'):format(i, opts.format_item and opts.format_item(it) or tostring(it))
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local win = vim.api.nvim_open_win(buf, true, { relative = 'editor', row = 9, col = 6,
    width = #opts.prompt + 4, height = #lines, border = 'rounded', style = 'minimal',
    title = ' ' .. opts.prompt .. ' ', title_pos = 'center' })
  vim.wo[win].cursorline = true
  for i = 1, #items do
    vim.keymap.set('n', tostring(i), function()
      vim.api.nvim_win_close(win, true)
      on_choice(items[i], i)
    end, { buffer = buf })
  end
end
vim.cmd('edit hello.py')
vim.cmd('OpenProgram add a greet function to hello.py')
"""

XTERM = [
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
]


def _c256(n: int) -> str:
    if n < 16:
        return XTERM[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        r, g, b = steps[n // 36], steps[(n // 6) % 6], steps[n % 6]
        return f"#{r:02x}{g:02x}{b:02x}"
    v = 8 + 10 * (n - 232)
    return f"#{v:02x}{v:02x}{v:02x}"


def ansi_to_html(text: str) -> str:
    """Convert SGR-coloured terminal text to HTML spans."""
    out: list[str] = []
    st: dict[str, object] = {}
    pos = 0
    for m in re.finditer(r"\x1b\[([0-9;:]*)m", text):
        out.append(_span(text[pos:m.start()], st))
        pos = m.end()
        codes = [int(c) if c else 0 for c in re.split("[;:]", m.group(1))]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                st = {}
            elif c in (1, 3, 4, 7):
                st[{1: "b", 3: "i", 4: "u", 7: "rev"}[c]] = True
            elif c in (22, 23, 24, 27):
                st.pop({22: "b", 23: "i", 24: "u", 27: "rev"}[c], None)
            elif 30 <= c <= 37 or 90 <= c <= 97:
                st["fg"] = XTERM[c - 30 if c < 90 else c - 82]
            elif 40 <= c <= 47 or 100 <= c <= 107:
                st["bg"] = XTERM[c - 40 if c < 100 else c - 92]
            elif c in (38, 48) and i + 1 < len(codes):
                key = "fg" if c == 38 else "bg"
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    st[key] = _c256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    r, g, b = codes[i + 2:i + 5]
                    st[key] = f"#{r:02x}{g:02x}{b:02x}"
                    i += 4
            elif c == 39:
                st.pop("fg", None)
            elif c == 49:
                st.pop("bg", None)
            i += 1
    out.append(_span(text[pos:], st))
    return "".join(out)


def _span(s: str, st: dict[str, object]) -> str:
    if not s:
        return ""
    fg, bg = str(st.get("fg", FG)), str(st.get("bg", BG))
    if st.get("rev"):
        fg, bg = bg, fg
    css = f"color:{fg};background:{bg}"
    if st.get("b"):
        css += ";font-weight:bold"
    if st.get("i"):
        css += ";font-style:italic"
    if st.get("u"):
        css += ";text-decoration:underline"
    return f'<span style="{css}">{html.escape(s)}</span>'


def page(body: str) -> str:
    """The HTML page for one captured screen."""
    return (
        "<!doctype html><meta charset=utf-8><style>"
        f"body{{margin:0;background:{BG}}}"
        "pre{margin:0;padding:10px;font:14px/1.25 'DejaVu Sans Mono',monospace;"
        f"color:{FG};background:{BG}}}</style><pre>{body}</pre>"
    )


def tmux(*args: str) -> str:
    """Run a tmux command on the private socket."""
    return subprocess.run(["tmux", "-L", "openprogram-shot", *args], check=True,
                          capture_output=True, text=True).stdout


def capture() -> str:
    """The pane with its colours."""
    return tmux("capture-pane", "-e", "-p", "-t", "shot")


def wait_for(needle: str, timeout: float = 30.0) -> str:
    """Poll the pane until `needle` shows (bounded)."""
    end = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < end:
        screen = capture()
        if needle in re.sub(r"\x1b\[[0-9;:]*m", "", screen):
            return screen
        time.sleep(0.2)
    raise TimeoutError(f"{needle!r} never appeared:\n{screen}")


def main() -> int:
    """Drive the session, capture the approval moment, render it to PNG."""
    for tool in ("tmux", "chromium"):
        if not shutil.which(tool):
            print(f"{tool} is needed", file=sys.stderr)
            return 1
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "demo"
        ws.mkdir()
        (ws / "hello.py").write_text(HELLO)
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps(SCRIPT))
        lua = Path(tmp) / "shot.lua"
        cmd = [str(bindir / "openprogram-lsp"), "serve"]
        lua.write_text(LUA % {"cmd": json.dumps(cmd).replace("[", "{").replace("]", "}"),
                              "model": json.dumps(f"scripted:{script}")})
        env = (f"env OPENPROGRAM_HOME={tmp}/home COLORTERM=truecolor "
               f"XDG_STATE_HOME={tmp}/state XDG_CONFIG_HOME={tmp}/cfg")
        nvim = (f"{env} {bindir / 'nvim'} --clean --cmd 'set rtp^={PLUGIN}' "
                f"-c 'set termguicolors noshowmode laststatus=3' -c 'luafile {lua}'")
        tmux("-f", "/dev/null", "new-session", "-d", "-s", "shot", "-x", str(COLS), "-y",
             str(ROWS), "-c", str(ws), nvim)
        try:
            tmux("set-option", "-t", "shot", "-g", "status", "off")
            screen = wait_for("Always reject")
            time.sleep(0.3)
            screen = capture()
            tmux("send-keys", "-t", "shot", "1", "Enter")
            wait_for("returns the text")
        finally:
            subprocess.run(["tmux", "-L", "openprogram-shot", "kill-server"], check=False)
        htmlfile = Path(tmp) / "shot.html"
        htmlfile.write_text(page(ansi_to_html(screen)), "utf-8")
        OUT.parent.mkdir(parents=True, exist_ok=True)
        width, height = COLS * 9 - COLS // 2 + 20, int(ROWS * 17.5) + 20
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--screenshot={OUT}",
                        f"--window-size={width},{height}", htmlfile.as_uri()],
                       check=True, capture_output=True, env=dict(os.environ))
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
