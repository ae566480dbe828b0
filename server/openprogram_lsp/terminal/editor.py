"""``openprogram-lsp editor nvim|vscode``: where the editor clients shipped with this install are.

The wheel carries the Neovim plugin (``editor_files/nvim``, a link to ``editors/nvim`` in a
checkout) and, when the extension was built before the wheel, the VS Code extension
(``editor_files/vscode/dist/openprogram.vsix``); an install without a clone finds both here.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from openprogram_lsp.terminal.errors import CliError

FILES = Path(__file__).resolve().parent.parent / "editor_files"
VSIX = "dist/openprogram.vsix"


def nvim_dir() -> Path:
    """The Neovim plugin's directory (for ``rtp:append`` or a lazy.nvim ``dir``)."""
    found = (FILES / "nvim").resolve()
    if not (found / "lua" / "openprogram" / "init.lua").is_file():
        raise CliError(f"the Neovim plugin is missing from this install ({found})",
                       "reinstall openprogram-lsp, or use the plugin from a clone: "
                       "editors/nvim")
    return found


def vsix() -> Path:
    """The built VS Code extension; CliError saying how to build it when it is not here."""
    found = (FILES / "vscode" / VSIX).resolve()
    if found.is_file():
        return found
    source = (FILES / "vscode").resolve()
    if (source / "package.json").is_file():
        raise CliError(f"the VS Code extension is not built yet ({found})",
                       f"build it: cd {source} && npm ci && npm run package")
    raise CliError("this install carries no VS Code extension",
                   "build it from a clone (editors/vscode: npm ci && npm run package), or "
                   "install a wheel built after it")


def install_vsix(path: Path) -> int:
    """``code --install-extension PATH`` with the first VS Code command line found."""
    for cli in ("code", "code-insiders", "codium", "code-server"):
        exe = shutil.which(cli)
        if exe:
            return subprocess.run([exe, "--install-extension", str(path), "--force"],
                                  check=False).returncode
    raise CliError("no VS Code command line (code, codium, code-server) on PATH",
                   f"install it from VS Code: Extensions → … → Install from VSIX → {path}")
