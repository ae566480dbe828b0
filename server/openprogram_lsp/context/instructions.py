"""Project instructions: AGENTS.md, CLAUDE.md, .openprogram/instructions.md, and the user's
(ours and Claude Code's ``~/.claude/CLAUDE.md``). A CLAUDE.md's ``@path`` imports are followed
as Claude Code follows them (relative to the file, ``~/`` the home directory, five levels
deep), each imported file listed after the one importing it; a workspace's file imports only
from inside the workspace, so a cloned repository cannot pull the user's files into the prompt.

They join the system prompt, which compaction never touches (only history is snipped or
summarised), so they survive every compaction. Files are re-read when their size or mtime
changes; each turn's ContextCommit lists the ones it used with a digest.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from openprogram_lsp.context.budget import estimate_text
from openprogram_lsp.core.turn_root import real_path

WORKSPACE_FILES = ("AGENTS.md", "CLAUDE.md", ".openprogram/instructions.md")
MAX_BYTES = 64 * 1024  # per file; the rest is cut with a note
MAX_DEPTH = 5  # of CLAUDE.md imports, as Claude Code
MAX_IMPORTS = 32  # files imported in all
_IMPORT = re.compile(r"(?<![\w`@])@((?:~/|\.{1,2}/|/)?[\w.\-][\w.\-/]*)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_SPAN = re.compile(r"`[^`\n]*`")


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instructions file as the model sees it."""

    path: str  # as shown: relative to the workspace, or ~/... for the user's
    scope: str  # "workspace" or "user"
    text: str
    sha256: str
    truncated: bool = False

    def listing(self) -> dict[str, object]:
        """The file as listed in a ContextCommit."""
        return {"path": self.path, "scope": self.scope, "sha256": self.sha256,
                "tokens": estimate_text(self.text), **({"truncated": True}
                                                       if self.truncated else {})}


def user_file() -> Path:
    """``$XDG_CONFIG_HOME/openprogram-lsp/AGENTS.md`` (default ``~/.config``)."""
    return _user_file(os.environ.get("XDG_CONFIG_HOME") or "", os.environ.get("HOME"))


@functools.lru_cache(maxsize=16)
def _user_file(xdg: str, home: str | None) -> Path:
    """``user_file`` for one ``XDG_CONFIG_HOME`` and ``HOME`` (every turn asks)."""
    base = xdg or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "openprogram-lsp" / "AGENTS.md"


_cache: dict[str, tuple[tuple[int, int, int], Instruction | None]] = {}
_lock = threading.Lock()


def _load(path: Path, shown: str, scope: str) -> Instruction | None:
    try:
        st = os.stat(path)  # follows links: a linked AGENTS.md is common and fine to read
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    with _lock:
        hit = _cache.get(str(path))
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    cut = len(data) > MAX_BYTES
    text = data[:MAX_BYTES].decode("utf-8", "replace").strip()
    found = Instruction(path=shown, scope=scope, text=text,
                        sha256=hashlib.sha256(data[:MAX_BYTES]).hexdigest(),
                        truncated=cut) if text else None
    with _lock:
        _cache[str(path)] = (key, found)
    return found


def claude_user_file() -> Path:
    """Claude Code's user instructions: ``$CLAUDE_CONFIG_DIR/CLAUDE.md`` or
    ``~/.claude/CLAUDE.md``."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    base = Path(configured).expanduser() if configured else Path(
        os.path.expanduser("~")) / ".claude"
    return base / "CLAUDE.md"


def _imports(text: str) -> list[str]:
    """The ``@path`` imports of a CLAUDE.md, outside code blocks and spans."""
    return _IMPORT.findall(_SPAN.sub("", _FENCE.sub("", text)))


def _imported(item: Instruction, where: Path, fence: str, seen: set[str], depth: int,
              out: list[Instruction]) -> None:
    """Append the files ``item`` (read from ``where``) imports, depth first; ``fence`` is the
    directory they must resolve inside."""
    if depth >= MAX_DEPTH:
        return
    for ref in _imports(item.text):
        if len(seen) >= MAX_IMPORTS:
            return
        raw = os.path.expanduser(ref) if ref.startswith("~/") else os.path.join(
            str(where.parent), ref)
        try:
            target = os.path.realpath(raw)
        except OSError:
            continue
        if target in seen or not (target + os.sep).startswith(fence) \
                or f"{os.sep}.git{os.sep}" in target[len(fence) - 1:] \
                or not os.path.isfile(target):
            continue
        seen.add(target)
        found = _load(Path(target), _shown(target) if item.scope == "user" else
                      os.path.relpath(target, fence.rstrip(os.sep)), item.scope)
        if found is not None:
            out.append(found)
            _imported(found, Path(target), fence, seen, depth + 1, out)


def load_instructions(workspace: Path, user: Path | None = None) -> list[Instruction]:
    """The instruction files that apply to a workspace, the user's first."""
    out: list[Instruction] = []
    seen: set[str] = set()
    home_dir = os.path.realpath(os.path.expanduser("~")) + os.sep
    homes = [user if user is not None else user_file()]
    if user is None:
        homes.append(claude_user_file())
    for home in homes:
        mine = _load(home, _shown(str(home)), "user")
        if mine is not None:
            out.append(mine)
            if home.name == "CLAUDE.md":
                seen.add(os.path.realpath(home))
                _imported(mine, home, home_dir, seen, 0, out)
    root = real_path(workspace)
    top = root if root.endswith(os.sep) else root + os.sep
    for name in WORKSPACE_FILES:
        target = f"{top}{name}"
        if not os.path.exists(target):
            continue  # the common case: one stat, nothing to resolve
        try:
            inside = os.path.realpath(target).startswith(top)
        except OSError:
            continue
        if not inside:
            continue  # a link out of the workspace is not the project's instructions
        found = _load(Path(target), name, "workspace")
        if found is not None:
            out.append(found)
            if name == "CLAUDE.md":
                seen.add(os.path.realpath(target))
                _imported(found, Path(os.path.realpath(target)), top, seen, 0, out)
    return out


def _shown(path: str) -> str:
    """A path as shown: under the home directory as ``~/...``."""
    return path.replace(os.path.expanduser("~"), "~", 1)


def render_instructions(items: list[Instruction]) -> str:
    """The system prompt's instructions section ("" when there are none)."""
    if not items:
        return ""
    parts = ["Project instructions (follow them; the user's file first, then the project's):"]
    for item in items:
        note = "\n[... cut at 64 KiB]" if item.truncated else ""
        parts.append(f'<instructions path="{item.path}">\n{item.text}{note}\n</instructions>')
    return "\n\n".join(parts)
