"""Built-in policies on the hook mechanism: destructive commands, and edits with no test run.

``destructive`` is a critical-tier gate: it refuses ``rm -rf`` of the root or the home
directory, a forced ``git push`` to a protected branch, and a download piped into a shell,
unless a remembered or configured rule allows that exact command. ``UntestedEdits`` notes a
turn that changed code files but ran no test command. Both can be switched off in the user's
config (``policies.destructiveCommands`` / ``policies.untestedEdits``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

PROTECTED_BRANCHES = ("main", "master", "trunk", "develop", "production", "release", "release/*")
_ROOTS = {"/", "/*", "~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "${HOME}/", "$HOME/*",
          "/.", "//"}
_WRAPPERS = {"sudo", "doas", "env", "command", "exec", "nohup", "time", "nice", "xargs",
             "builtin"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby",
           "node"}
_FETCHERS = {"curl", "wget", "fetch"}
_SEPARATORS = {";", "&&", "||", "&", "\n", "(", ")", "{", "}"}


def _commands(command: str) -> list[list[list[str]]]:
    """Pipelines of simple commands (words), split on shell separators and pipes."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: judge the raw words
        tokens = command.split()
    pipelines: list[list[list[str]]] = [[[]]]
    for tok in tokens:
        if tok in _SEPARATORS or tok in ("&&", "||", ";;"):
            pipelines.append([[]])
        elif tok in ("|", "|&"):
            pipelines[-1].append([])
        elif set(tok) <= set(";&|()<>"):
            pipelines.append([[]])
        else:
            pipelines[-1][-1].append(tok)
    return [[c for c in p if c] for p in pipelines if any(p)]


def _strip(words: list[str]) -> list[str]:
    """The command behind wrappers like ``sudo`` and ``env VAR=x``."""
    i = 0
    while i < len(words):
        w = words[i]
        base = PurePosixPath(w).name
        if base in _WRAPPERS or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w):
            i += 1
            continue
        if w.startswith("-") and i > 0 and PurePosixPath(words[i - 1]).name in _WRAPPERS:
            i += 1
            continue
        break
    return words[i:]


def _rm_root(words: list[str]) -> bool:
    if not words or PurePosixPath(words[0]).name != "rm":
        return False
    flags = "".join(w[1:] for w in words[1:] if w.startswith("-") and not w.startswith("--"))
    long = {w for w in words[1:] if w.startswith("--")}
    recursive = "r" in flags or "R" in flags or "--recursive" in long
    targets = [w for w in words[1:] if not w.startswith("-")]
    return recursive and any(t.rstrip("/") in ("", "~", "$HOME", "${HOME}") or t in _ROOTS
                             for t in targets)


def _protected(branch: str, protected: tuple[str, ...]) -> bool:
    branch = branch.removeprefix("refs/heads/")
    return any(fnmatchcase(branch, p) for p in protected)


def _current_branch(workspace: Path | None) -> str | None:
    if workspace is None:
        return None
    try:
        head = (workspace / ".git" / "HEAD").read_text("utf-8").strip()
    except OSError:
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: ") else None


def _force_push(words: list[str], workspace: Path | None, protected: tuple[str, ...]) -> str:
    if len(words) < 2 or PurePosixPath(words[0]).name != "git":
        return ""
    rest = words[1:]
    while rest and rest[0].startswith("-"):  # git -C dir push ...
        rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
    if not rest or rest[0] != "push":
        return ""
    args = rest[1:]
    forced = any(a in ("-f", "--force", "--force-with-lease", "--mirror") or
                 a.startswith("--force-with-lease=") or
                 (a.startswith("-") and not a.startswith("--") and "f" in a) for a in args)
    deleting = "--delete" in args or "-d" in args
    refspecs = [a for a in args if not a.startswith("-")][1:]  # after the remote
    for spec in refspecs:
        src, colon, dst = spec.lstrip("+").partition(":")
        target = dst or src
        if not target or not _protected(target, protected):
            continue
        if forced or spec.startswith("+"):
            return f"a forced push to the protected branch {target!r}"
        if deleting or (colon and not src):
            return f"deleting the protected branch {target!r}"
    if forced and not refspecs:
        branch = _current_branch(workspace)
        if branch is None or _protected(branch, protected):
            return f"a forced push of {branch or 'the current branch'!r} (protected)"
    return ""


def _piped_to_shell(pipeline: list[list[str]]) -> bool:
    names = [PurePosixPath(_strip(c)[0]).name if _strip(c) else "" for c in pipeline]
    for i, name in enumerate(names):
        if name in _FETCHERS and any(n in _SHELLS for n in names[i + 1:]):
            return True
    return False


_SUBST = re.compile(r"\b(?:sh|bash|zsh|dash)\b[^|;&]*(?:<\(|\$\(|`)\s*(?:curl|wget)\b")


def destructive(command: str, *, workspace: Path | None = None,
                protected: tuple[str, ...] = PROTECTED_BRANCHES) -> str:
    """Why a shell command is destructive ("" when it is not)."""
    if _SUBST.search(command):
        return "a download run directly by a shell"
    for pipeline in _commands(command):
        if _piped_to_shell(pipeline):
            return "a download piped into a shell"
        for simple in pipeline:
            words = _strip(simple)
            if _rm_root(words):
                return "a recursive delete of the root or home directory"
            why = _force_push(words, workspace, protected)
            if why:
                return why
    return ""


CODE_SUFFIXES = frozenset({
    ".py", ".pyi", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".go", ".rs", ".java", ".kt",
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".scala", ".lua", ".sh",
    ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".dart", ".vue", ".svelte", ".zig"})
_TEST = re.compile(
    r"(?:^|[\s/;&|(])(?:pytest|py\.test|tox|nox|unittest|jest|vitest|mocha|rspec|phpunit|"
    r"ctest|go\s+test|cargo\s+(?:test|nextest)|(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?test|"
    r"make\s+(?:test|check)|mvn\s+\S*\s*test|gradlew?\s+test|dotnet\s+test|mix\s+test|"
    r"busted|scripts/test|bin/test|run_tests|test\.sh|python3?\s+-m\s+(?:pytest|unittest))\b")


@dataclass(slots=True)
class UntestedEdits:
    """Watches one turn's tool calls: code edited, tests run."""

    edited: bool = False
    tested: bool = False
    edited_paths: tuple[str, ...] = ()

    def saw(self, tool: str, arguments: dict[str, object], ok: bool) -> None:
        """Record a finished tool call (one that ran: a refused call never gets here).

        A test command counts whatever its outcome: failing tests were still run."""
        if tool == "run_command":
            command = arguments.get("command")
            if isinstance(command, str) and _TEST.search(command):
                self.tested = True
            return
        if not ok:
            return
        if tool in ("write_file", "edit_file", "multi_edit"):
            path = arguments.get("path")
            if isinstance(path, str) and PurePosixPath(path).suffix.lower() in CODE_SUFFIXES:
                self.edited = True
                if path not in self.edited_paths:
                    self.edited_paths = (*self.edited_paths, path)

    def note(self) -> str | None:
        """The note for a turn that changed code and ran no test, else None."""
        if not self.edited or self.tested:
            return None
        shown = ", ".join(self.edited_paths[:3]) + (" ..." if len(self.edited_paths) > 3 else "")
        return f"This turn changed code ({shown}) but ran no tests."
