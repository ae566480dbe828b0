"""Process and memory limits of a sandboxed command, so that none can take the machine down.

Two layers (docs/decisions/sandbox-limits.md):

- **rlimits, always**: ``prlimit --nproc=N --data=M --`` in front of the shell inside the box.
  ``RLIMIT_NPROC`` counts per user *and user namespace* (Linux 5.14+), so inside bwrap's own
  namespace it counts the box's processes only; ``RLIMIT_DATA`` bounds each process's
  writable memory (a reservation that is never made writable, as Go and the JVM make, is not
  counted). A box run by root has no user namespace of its own and ignores ``RLIMIT_NPROC``.
- **a cgroup, where we may make one** (``Cgroup.make``: v2 with the ``pids`` and ``memory``
  controllers delegated to our cgroup, or v1's ``pids`` and ``memory`` hierarchies writable):
  ``pids.max`` and the memory limit bound the whole command, whatever its user; its event
  counters say afterwards which limit was hit.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from openprogram_lsp.config import Settings
from openprogram_lsp.config.sections.sandbox import SandboxSection

CGROUP_ROOT = Path("/sys/fs/cgroup")
MIB = 1024 * 1024
_SEQ = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Limits:
    """What one sandboxed command may use (0: no limit)."""

    processes: int = 0
    memory: int = 0  # bytes

    def describe(self) -> str:
        """``1024 processes, 2048 MiB`` for notes and status."""
        said = [f"{self.processes} processes" if self.processes else "",
                f"{self.memory // MIB} MiB of memory" if self.memory else ""]
        return ", ".join(s for s in said if s) or "no limits"


@functools.cache
def _half_of_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (OSError, ValueError):
        return 4096 * MIB


def limits_of(settings: Settings | None = None) -> Limits:
    """The ``[sandbox]`` limits of the validated ``settings`` (the defaults without)."""
    section = (settings or Settings.defaults()).get(SandboxSection)
    memory = _half_of_memory() if section.max_memory_mb is None else section.max_memory_mb * MIB
    return Limits(processes=section.max_processes, memory=memory)


@functools.cache
def _prlimit() -> str | None:
    return shutil.which("prlimit", path="/usr/bin:/bin:/usr/sbin:/sbin") or shutil.which(
        "prlimit")


def rlimit_argv(limits: Limits) -> list[str]:
    """``prlimit ... --`` to put in front of the command inside the box ([] when none)."""
    exe = _prlimit()
    if exe is None:
        return []
    args = [exe]
    if limits.processes:
        args.append(f"--nproc={limits.processes}")
    if limits.memory:
        args.append(f"--data={limits.memory}")
    return [*args, "--"] if len(args) > 1 else []


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _counter(text: str, key: str) -> int:
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _own_cgroups() -> dict[str, str]:
    """Our cgroup per controller ("" for the v2 hierarchy), from ``/proc/self/cgroup``."""
    out: dict[str, str] = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


class Cgroup:
    """A cgroup of our own for one command: made, given the command's first process, read
    for the limit it hit, removed."""

    def __init__(self, dirs: dict[str, Path], limits: Limits, v2: bool) -> None:
        self.dirs = dirs  # controller -> its directory ("" for the v2 one)
        self.limits = limits
        self.v2 = v2

    @classmethod
    def make(cls, limits: Limits) -> Cgroup | None:
        """A new cgroup with ``limits``, or None where we may not make one."""
        if not (limits.processes or limits.memory):
            return None
        name = f"openprogram-{os.getpid()}-{next(_SEQ)}"
        own = _own_cgroups()
        if (CGROUP_ROOT / "cgroup.controllers").exists() and "" in own:
            return cls._make_v2(CGROUP_ROOT / own[""].lstrip("/") / name, limits)
        return cls._make_v1(own, name, limits)

    @classmethod
    def _make_v2(cls, path: Path, limits: Limits) -> Cgroup | None:
        try:
            path.mkdir()
        except OSError:
            return None
        group = cls({"": path}, limits, v2=True)
        wanted = {"pids", "memory"}
        if not wanted <= set(_read(path / "cgroup.controllers").split()):
            group.remove()
            return None
        try:
            if limits.processes:
                (path / "pids.max").write_text(str(limits.processes))
            if limits.memory:
                (path / "memory.max").write_text(str(limits.memory))
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
        except OSError:
            group.remove()
            return None
        return group

    @classmethod
    def _make_v1(cls, own: dict[str, str], name: str, limits: Limits) -> Cgroup | None:
        dirs: dict[str, Path] = {}
        group = cls(dirs, limits, v2=False)
        for controller, file, value in (("pids", "pids.max", limits.processes),
                                         ("memory", "memory.limit_in_bytes", limits.memory)):
            if not value or controller not in own:
                continue
            path = CGROUP_ROOT / controller / own[controller].lstrip("/") / name
            try:
                path.mkdir()
                dirs[controller] = path
                (path / file).write_text(str(value))
            except OSError:
                group.remove()
                return None
        return group if dirs else None

    def attach(self, pid: int) -> None:
        """Move ``pid`` (the box's first process, before it runs anything) into the group."""
        for path in self.dirs.values():
            (path / "cgroup.procs").write_text(str(pid))

    def hit(self) -> list[str]:
        """The limits the command ran into: "processes", "memory"."""
        out: list[str] = []
        pids = self.dirs.get("" if self.v2 else "pids")
        if pids is not None and _counter(_read(pids / "pids.events"), "max"):
            out.append("processes")
        memory = self.dirs.get("" if self.v2 else "memory")
        if memory is not None:
            events = _read(memory / ("memory.events" if self.v2 else "memory.oom_control"))
            if _counter(events, "oom_kill") or _counter(events, "oom"):
                out.append("memory")
        return out

    def remove(self) -> None:
        """Remove the group once its processes are gone (the box's init was killed: the
        kernel ends the rest within moments; bounded wait, then it is left as it is)."""
        for path in self.dirs.values():
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.004)


# what a program prints when a limit refuses it (for the rlimit-only case)
_FORK_FAILED = ("cannot fork", "fork: resource temporarily unavailable", "fork: retry",
                "can't fork", "resource temporarily unavailable")
_NO_MEMORY = ("cannot allocate memory", "memoryerror", "out of memory", "std::bad_alloc",
              "allocation failed", "failed to allocate", "memory allocation of")


def note(limits: Limits, hit: list[str] | None, output: str) -> str:
    """The line naming the limits a command ran into ("" when none): those the cgroup's
    counters show (``hit``), and those what the command printed suggests (an rlimit refusal
    leaves no counter)."""
    sure = set(hit or [])
    low = output.lower()
    maybe = {*({"processes"} if limits.processes and any(s in low for s in _FORK_FAILED)
               else set()),
             *({"memory"} if limits.memory and any(s in low for s in _NO_MEMORY) else set())}
    said = []
    for what, shown in (("processes", f"the sandbox's process limit ({limits.processes}, "
                                      "[sandbox] max_processes)"),
                        ("memory", f"the sandbox's memory limit ({limits.memory // MIB} MiB, "
                                   "[sandbox] max_memory_mb)")):
        if what in sure:
            said.append(f"reached {shown}")
        elif what in maybe:
            said.append(f"may have reached {shown}")
    return f"[the command {' and '.join(said)}]" if said else ""


def enforcement(limits: Limits) -> str:
    """How ``limits`` hold on this machine, in words: by a cgroup of our own (whatever the
    user), or by rlimits alone, which a box run by root keeps for memory only (it has no user
    namespace, and ``RLIMIT_NPROC`` does not bind root). Makes and removes a probe cgroup."""
    if not (limits.processes or limits.memory):
        return "no limits"
    probe = Cgroup.make(limits)
    if probe is not None:
        probe.remove()
        return "held by a cgroup"
    if _prlimit() is None:
        return "NOT held: no cgroup may be made here and prlimit is missing"
    if limits.processes and os.geteuid() == 0:
        return ("held by rlimits only: no cgroup may be made here, and as root the process "
                "limit does not hold")
    return "held by rlimits only (no cgroup may be made here)"
