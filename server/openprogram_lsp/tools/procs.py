"""What every child process the tools start shares: a scrubbed environment, a start that a
cancel cannot leak, and an end that takes everything the child started with it."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import json
import os
import select
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence

from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.core.secrets import is_secret_name
from openprogram_lsp.tools import proctree

KILL_WAIT = 5.0  # seconds a killed child gets to end before the kill stops waiting
START_WAIT = 10.0  # seconds bwrap gets to report its sandbox's init


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment without any credential, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not is_secret_name(k)}
    env.update(extra or {})
    return env


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when this process dies (Linux); the
    fallback where ``pdeathsig_prefix`` finds no ``setpriv``.

    A child in its own session is out of reach of a kill of the server's process group, and a
    server killed with SIGKILL cannot reap it: without this a ``sleep 600`` outlives it.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the server died between fork and prctl
            os._exit(1)

    return preexec


@functools.cache
def pdeathsig_prefix() -> tuple[str, ...] | None:
    """``setpriv --pdeathsig KILL --`` (util-linux) when it works here, else None.

    The child then asks for SIGKILL on our death itself, before it execs the command, so no
    ``preexec_fn`` is needed. With one, Python forks the whole server (copying its page tables)
    and waits for the child to run Python code: 30+ ms with the event loop blocked on each
    spawn, seconds under load (``bench/bench_spawn.py``); without one it uses vfork. The cost:
    a server killed between the vfork and setpriv's prctl leaves that one child running.
    """
    if not sys.platform.startswith("linux"):
        return None
    exe = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin") or shutil.which("setpriv")
    if exe is None:
        return None
    try:  # util-linux before 2.33 has no --pdeathsig
        probe = subprocess.run([exe, "--pdeathsig", "KILL", "--", exe, "--version"],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=10,
                               check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (exe, "--pdeathsig", "KILL", "--") if probe.returncode == 0 else None


class _Held:
    """A started process of ours and what its end needs, for both ways of waiting on it.

    Its first process is reaped here (never by asyncio's child watcher) and only once its
    process group (sandboxed: its PID namespace) has been killed: until the reap neither its
    pid nor its group id can go to another process, so no signal sent by number reaches a
    stranger; every other process is signalled through a pidfd proven ours.
    """

    def __init__(self, popen: subprocess.Popen[bytes], guard: proctree.Guard) -> None:
        self.pid = popen.pid
        self._popen = popen
        self._guard = guard
        self._fd = proctree.pidfd(popen.pid)  # our unreaped child: this pidfd is it
        self._init: int | None = None  # sandboxed: a pidfd for bwrap's PID-namespace init
        self._held: list[int] = []  # pidfds of descendants to kill at the end (hold_tree)
        guard.aim(popen.pid)

    @property
    def returncode(self) -> int | None:
        """The first process's exit status once it ended (and was reaped), else None."""
        return self._popen.returncode

    def hold_tree(self) -> None:
        """Hold the processes linked to the first process now by pidfds: when it ends, those
        still running are killed too, whatever group or session they moved to (for a close
        that lets it exit on its own, after which its orphans are out of reach)."""
        if self._fd is not None and self._popen.returncode is None:
            self._held += proctree.descendants(self.pid, self._fd)

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to its process group (unsandboxed), only while its first process is
        unreaped: the group id is ours until then."""
        if self._popen.returncode is None:
            proctree.kill_group(self.pid, sig)

    def _kill_all(self) -> None:
        if self._popen.returncode is not None:  # reaped: its numbers are no longer ours
            return
        if self._init is not None:  # the namespace's init: the kernel ends everything inside
            proctree.send(self._init, signal.SIGKILL)
        elif self._fd is not None and not proctree.exited(self._fd):
            proctree.kill_tree(self.pid, self._fd)
        proctree.kill_group(self.pid)

    def _reap(self) -> None:
        """The first process has exited: kill what it left running, then free its numbers."""
        if self._popen.returncode is None:
            self._kill_all()
            self._popen.wait()
            self._release()

    def _release(self) -> None:
        for held in self._held:
            proctree.send(held, signal.SIGKILL)
            os.close(held)
        for fd in (self._fd, self._init):
            if fd is not None:
                os.close(fd)
        self._held = []
        self._fd = self._init = None
        self._guard.close()


class Child(_Held):
    """A started tool process: its pipes, its end, and a kill of everything it started.

    When its first process exits, whatever it left running is killed at once: a
    ``sleep 600 &`` does not outlive the call, sandboxed or not.
    """

    def __init__(self, popen: subprocess.Popen[bytes], guard: proctree.Guard) -> None:
        super().__init__(popen, guard)
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._transports: list[asyncio.BaseTransport] = []
        self._watch()

    def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        if self._fd is not None:
            loop.add_reader(self._fd, self._on_exit)
            return

        def wait() -> None:  # no pidfd here: wait without reaping, in a thread of its own
            with contextlib.suppress(OSError):
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
            with contextlib.suppress(RuntimeError):  # the loop is closed
                loop.call_soon_threadsafe(self._on_exit)

        threading.Thread(target=wait, name=f"wait-{self.pid}", daemon=True).start()

    def _on_exit(self) -> None:
        if self._fd is not None:
            asyncio.get_running_loop().remove_reader(self._fd)
        self._reap()
        if not self.ended.done():
            self.ended.set_result(None)

    async def wait(self) -> int:
        """Wait for the first process to end (what it left is killed then); its status."""
        await asyncio.shield(self.ended)
        code = self._popen.returncode
        assert code is not None
        return code

    async def kill(self) -> None:
        """SIGKILL everything it started; wait (bounded) for the first process to end."""
        self._kill_all()
        if not self.ended.done():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(KILL_WAIT):
                    await asyncio.shield(self.ended)

    async def close(self) -> None:
        """Kill whatever still runs, then close the pipes (after the caller's last read)."""
        try:
            await self.kill()
        finally:
            for transport in self._transports:
                transport.close()

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        for name in ("stdout", "stderr"):
            pipe = getattr(self._popen, name)
            if pipe is not None:
                reader = asyncio.StreamReader(limit=2 ** 16, loop=loop)
                protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
                readend, _ = await loop.connect_read_pipe(functools.partial(_same, protocol),
                                                          pipe)
                self._transports.append(readend)
                setattr(self, name, reader)
        if self._popen.stdin is not None:
            protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop)
            writeend, _ = await loop.connect_write_pipe(functools.partial(_same, protocol),
                                                        self._popen.stdin)
            self._transports.append(writeend)
            self.stdin = asyncio.StreamWriter(writeend, protocol, None, loop)

    async def _hold_sandbox(self, info_fd: int, hold_fd: int,
                            on_init: Callable[[int], None] | None = None) -> None:
        """Take bwrap's report of its sandbox's init (``--info-fd``), hold the init by a pidfd
        and aim the guard at its group, then let the sandbox go on (``--block-fd`` keeps it
        waiting until then, before ``--new-session`` and before it runs anything)."""
        async with asyncio.timeout(START_WAIT):  # not wait_for: on 3.11 it can eat a cancel
            raw = await _read_all(info_fd)
        try:
            init = int(json.loads(raw)["child-pid"])
        except (ValueError, KeyError, TypeError):
            return  # bwrap failed before its sandbox: its exit and output say why
        fd = proctree.child_pidfd(self.pid, init)
        if (fd is None and proctree.pidfds()) or self._popen.returncode is not None:
            if fd is not None:
                os.close(fd)
            return  # the init is gone already (bwrap failed): nothing to let go
        self._init = fd  # None without pidfds (Linux before 5.3): the group kill only
        self._guard.aim(init)  # the group --new-session gives the init and the command
        if on_init is not None:  # e.g. into its cgroup, before it runs anything
            on_init(init)
        os.write(hold_fd, b"\0")


def _same(protocol: asyncio.StreamReaderProtocol) -> asyncio.StreamReaderProtocol:
    return protocol


async def _read_all(fd: int, limit: int = 65536) -> bytes:
    """Read a pipe to its end (at most ``limit`` bytes) without blocking the loop."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bytes] = loop.create_future()
    chunks: list[bytes] = []
    os.set_blocking(fd, False)

    def readable() -> None:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        chunks.append(chunk)
        if (not chunk or sum(map(len, chunks)) >= limit) and not done.done():
            done.set_result(b"".join(chunks))

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


def _popen(argv: Sequence[str], *, stdin: int | None, stdout: int | None, stderr: int | None,
           cwd: str | os.PathLike[str] | None, env: dict[str, str] | None,
           pass_fds: Sequence[int], pdeathsig: bool = True
           ) -> tuple[subprocess.Popen[bytes], proctree.Guard]:
    """``argv`` started in its own session with its death guard, and (``pdeathsig``) its
    first process under its own death signal too."""
    prefix = pdeathsig_prefix() if pdeathsig else ()
    guard = proctree.Guard()
    try:
        popen = subprocess.Popen(
            [*(prefix or ()), *argv], stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd,
            env=env, pass_fds=[*pass_fds, guard.read_fd], start_new_session=True,
            preexec_fn=None if prefix is not None else die_with_parent())
    except BaseException:
        guard.close()
        raise
    return popen, guard


async def spawn(*argv: str, sandboxed: bool = False, stdin: int | None = None,
                stdout: int | None = None, stderr: int | None = None,
                cwd: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None,
                pass_fds: Sequence[int] = (),
                on_init: Callable[[int], None] | None = None) -> Child:
    """Start ``argv`` in its own session, dying with this server (even by SIGKILL); a cancel
    at any point of the start kills whatever was started.

    ``sandboxed``: ``argv`` is a ``bwrap`` command line. Its sandbox runs in a session of its
    own (``--new-session``), out of reach of a kill of bwrap's group, and bwrap's
    ``--die-with-parent`` only covers it once it is set up; so bwrap reports the sandbox's
    init, the kill goes to that init (the kernel then ends every process in the namespace,
    whatever their session), and the sandbox waits for us to hold it before it runs anything.
    ``on_init`` gets that init's pid then (a failure kills what was started).
    """
    info = hold = (-1, -1)
    keep = list(pass_fds)
    if sandboxed:
        info, hold = os.pipe(), os.pipe()  # both ends of hold go in: our death is no EOF
        argv = (argv[0], "--info-fd", str(info[1]), "--block-fd", str(hold[0]), *argv[1:])
        keep += [info[1], *hold]
    try:
        popen, guard = _popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd,
                              env=env, pass_fds=keep)
    except BaseException:
        for fd in (info[0], hold[1]):
            if fd >= 0:
                os.close(fd)
        raise
    finally:
        for fd in (info[1], hold[0]):
            if fd >= 0:
                os.close(fd)
    child = Child(popen, guard)
    try:
        await child._connect()
        if sandboxed:
            await child._hold_sandbox(info[0], hold[1], on_init)
    except BaseException as exc:
        await asyncio.shield(child.close())
        if isinstance(exc, TimeoutError):
            raise ToolError(f"the sandbox did not start within {START_WAIT:g} s") from exc
        raise
    finally:
        for fd in (info[0], hold[1]):
            if fd >= 0:
                os.close(fd)
    return child


DRAIN_WAIT = 1.0  # seconds the pipes get to reach their end once everything was killed


class BlockingChild(_Held):
    """A started process for a thread that blocks on it (a hook): the same guarantees as
    :class:`Child` — its death guard, a kill only of what is ours, and at its first process's
    exit the end of whatever it left running."""

    def _exited(self, timeout: float) -> bool:
        """Whether the first process has exited (not reaped), waiting up to ``timeout``."""
        if self._popen.returncode is not None:
            return True
        if self._fd is not None:
            poll = select.poll()  # not select.select: a busy server's fds pass 1024
            poll.register(self._fd, select.POLLIN)
            return bool(poll.poll(max(0.0, timeout) * 1000))
        end = time.monotonic() + timeout  # no pidfd here: poll without reaping
        while True:
            with contextlib.suppress(ChildProcessError):
                if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG):
                    return True
            if time.monotonic() >= end:
                return False
            time.sleep(min(0.01, max(0.0, end - time.monotonic())))

    def communicate(self, data: bytes, *, until: float, stop: Callable[[], bool] | None = None,
                    limit: int = 2 ** 20, poll: float = 0.05) -> tuple[bytes, bytes, str]:
        """Write ``data`` to stdin and read stdout and stderr (``limit`` bytes of each kept,
        the rest read and dropped) until the first process ends; everything it started is
        killed then, or at ``until`` (``time.monotonic()``), or once ``stop()`` says so
        (asked every ``poll`` seconds). Returns (stdout, stderr, why): why is "", "timeout"
        or "cancel"."""
        out_fd, err_fd = (p.fileno() if p is not None else -1
                          for p in (self._popen.stdout, self._popen.stderr))
        reading = {fd for fd in (out_fd, err_fd) if fd >= 0}
        kept = {fd: bytearray() for fd in reading}
        sel = selectors.DefaultSelector()
        for fd in reading:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        writer, view = self._popen.stdin, memoryview(data)
        in_fd = writer.fileno() if writer is not None else -1
        if writer is not None:
            if view:
                os.set_blocking(in_fd, False)
                sel.register(in_fd, selectors.EVENT_WRITE)
            else:
                writer.close()
        pidfd = self._fd
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ)  # readable once the first process exits
        why = ""
        drain_by: float | None = None  # set once everything of it was killed
        try:
            while drain_by is None or reading or (writer is not None and not writer.closed):
                now = time.monotonic()
                if drain_by is None:
                    exited = self._exited(0)
                    if not exited and now >= until:
                        why = "timeout"
                    elif not exited and stop is not None and stop():
                        why = "cancel"
                    if exited or why:
                        if pidfd is not None:
                            sel.unregister(pidfd)
                        if why:
                            self._kill_all()
                            if not self._exited(KILL_WAIT):
                                break  # stuck in the kernel: _finish leaves it to a thread
                        self._reap()  # what it left is killed: the pipes reach their end
                        if writer is not None and not writer.closed:
                            sel.unregister(in_fd)
                            writer.close()
                        drain_by = time.monotonic() + DRAIN_WAIT
                        continue
                elif now >= drain_by:
                    break  # a process out of our reach holds a pipe: stop reading it
                wait = (until if drain_by is None else drain_by) - now
                if drain_by is None and (stop is not None or pidfd is None):
                    wait = min(wait, poll)
                for key, _ in sel.select(max(0.0, wait)):
                    fd = int(key.fd)
                    if fd == pidfd:
                        continue  # the exit is handled at the top of the loop
                    if fd == in_fd:
                        try:
                            view = view[os.write(fd, view[:65536]):]
                        except BlockingIOError:
                            continue
                        except OSError:  # it stopped reading its stdin: not an error
                            view = view[:0]
                        if not view and writer is not None:
                            sel.unregister(fd)
                            writer.close()
                        continue
                    try:
                        chunk = os.read(fd, 65536)
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    if not chunk:
                        sel.unregister(fd)
                        reading.discard(fd)
                    elif len(kept[fd]) < limit:
                        kept[fd] += chunk[:limit - len(kept[fd])]
        finally:
            sel.close()
            for pipe in (writer, self._popen.stdout, self._popen.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            self._finish()
        return bytes(kept.get(out_fd, b"")), bytes(kept.get(err_fd, b"")), why

    def _finish(self) -> None:
        """Make sure the first process ends and is reaped, bounded; past the bound a thread
        reaps it whenever it goes (a process stuck in the kernel)."""
        if self._popen.returncode is not None:
            return
        self._kill_all()
        if self._exited(KILL_WAIT):
            self._reap()
        else:
            threading.Thread(target=self._reap, name=f"reap-{self.pid}", daemon=True).start()


def start(*argv: str, stdin: int | None = None, stdout: int | None = None,
          stderr: int | None = None, cwd: str | os.PathLike[str] | None = None,
          env: dict[str, str] | None = None) -> BlockingChild:
    """:func:`spawn` for a thread off the event loop (unsandboxed): the same session and
    death guard; wait on it with :meth:`BlockingChild.communicate`.

    No ``setpriv`` in front: its exec doubled a hook's start (2 ms of 4,
    ``bench/bench_hooks.py``), and the guard, aimed before ``start`` returns, already kills
    the whole group, first process included, when the server dies."""
    popen, guard = _popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env=env,
                          pass_fds=(), pdeathsig=False)
    return BlockingChild(popen, guard)
