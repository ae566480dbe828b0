"""Kill -9 real server and CLI processes during turns; after every kill the stores tell the truth.

Each round runs one turn of one session in a fresh process, either ``openprogram-lsp serve``
driven over stdio or ``openprogram-lsp chat --json``, and SIGKILLs its whole process group
(the git children and the sandboxed command with it) after some event of the turn. Before the
next turn, the session is read back: no node is ``running``, a turn cut short is
``interrupted``, every user message the process acknowledged is on the branch, the session is
not listed as running, and ``git fsck`` passes on the session store and the checkpoint store.
At the end one turn runs to completion (taking over any lock a kill left) and every file
version the agent acknowledged writing is found in some checkpoint.

The normal suite runs a few rounds (``tests/store/test_crash_kill.py``); the full size is

    .venv/bin/python -m tests.stress.crash --turns 200 [--seed N] [--keep DIR]

(it takes tens of minutes; run it from a snapshot of the tree, with ``PYTHONPATH`` pointing at
the snapshot's ``server`` and root, when the checkout may change meanwhile: every round starts
the server from the files as they are then).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from openprogram_lsp.store.session_store import SessionStore
from tests.lsp.tcp_helpers import encode, read_frame

PROGRAM = [sys.executable, "-m", "openprogram_lsp"]
WAIT = 120.0  # seconds any one step may take on a loaded machine
# Lock files of ours are flocks and stay on disk by design; every other *.lock is git's.
OUR_LOCKS = {"lock", "turn.lock", "openprogram-commit.lock"}

Kind = Literal["server", "cli"]


@dataclass(frozen=True)
class Round:
    """One turn: which process runs it and when it is killed (None: it runs to the end)."""

    kind: Kind
    kill_after: str | int | None  # an event type, or the number of events seen
    jitter: float = 0.0  # seconds between that event and the kill


@dataclass
class Ledger:
    """What the killed processes acknowledged, and what the run saw."""

    session_id: str | None = None
    acked: list[str] = field(default_factory=list)  # user texts of user.prompt_submitted
    cut: set[str] = field(default_factory=set)  # turns started, not seen finished, not read
    settled: dict[str, str] = field(default_factory=dict)  # cut turns as first read back
    versions: set[tuple[str, str]] = field(default_factory=set)  # (path, content) written
    kills: Counter[str] = field(default_factory=Counter)  # by process kind
    killed_after: Counter[str] = field(default_factory=Counter)  # by the last event seen
    locks_left: Counter[str] = field(default_factory=Counter)  # git locks found after a kill
    interrupted: int = 0


class CrashFailure(AssertionError):
    """A check failed after a kill."""


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise CrashFailure(message)


class Rig:
    """A state root, a workspace and the ledger of one crash run."""

    def __init__(self, root: Path, *, log: Callable[[str], None] | None = None) -> None:
        self.root = root
        self.home = root / "home"
        self.ws = root / "ws"
        self.scripts = root / "scripts"
        self.logs = root / "logs"
        for d in (self.home, self.ws, self.scripts, self.logs):
            d.mkdir(parents=True, exist_ok=True)
        self.ledger = Ledger()
        self.log = log or (lambda _line: None)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("OPENPROGRAM_", "GIT_"))}
        self.env.update({"OPENPROGRAM_HOME": str(self.home),
                         "XDG_CONFIG_HOME": str(root / "xdg-config"),
                         "OPENPROGRAM_CHECKPOINT_MAX_COUNT": "1000000",
                         "OPENPROGRAM_PERMISSION_MODE": "bypass"})
        self.turn = 0

    # -- one round ---------------------------------------------------------------------------

    def _script(self, n: int) -> str:
        """A model that writes a file, runs a command that writes another, then answers."""
        path = self.scripts / f"turn-{n}.json"
        path.write_text(json.dumps([
            {"text": f"Turn {n}: writing.", "tool_calls": [
                {"id": f"w{n}", "name": "write_file",
                 "arguments": {"path": f"f{n % 3}.txt", "content": f"turn {n}\n"}}]},
            {"tool_calls": [{"id": f"c{n}", "name": "run_command",
                             "arguments": {"command": f"printf 'cmd {n}\\n' > cmd.txt"}}]},
            {"text": f"Turn {n} is done: f{n % 3}.txt and cmd.txt hold it."},
        ]))
        return f"scripted:{path}"

    def _note(self, event: dict[str, Any], inputs: dict[str, dict[str, Any]]) -> None:
        """Record what an event acknowledges."""
        led, data = self.ledger, event.get("data") or {}
        kind = event.get("type")
        if led.session_id is None and event.get("sessionId"):
            led.session_id = str(event["sessionId"])
        if kind == "user.prompt_submitted":
            led.acked.append(str(data["text"]))
        elif kind == "turn.started":
            led.cut.add(str(data["assistantNodeId"]))
        elif kind == "turn.finished":
            led.cut.discard(str(data["assistantNodeId"]))
        elif kind == "tool.started":
            inputs[str(data["toolCallId"])] = dict(data.get("input") or {})
        elif kind == "tool.finished" and data.get("status") == "completed":
            args = inputs.get(str(data["toolCallId"]), {})
            if "path" in args and "content" in args:
                led.versions.add((str(args["path"]), str(args["content"])))
            elif "command" in args:
                text = str(args["command"]).split("'")[1].replace("\\n", "\n")
                led.versions.add(("cmd.txt", text))

    async def _start(self, argv: list[str], log: Path) -> asyncio.subprocess.Process:
        with log.open("ab") as err:
            return await asyncio.create_subprocess_exec(
                *argv, env=self.env, cwd=self.root, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=err, start_new_session=True)

    async def _kill(self, proc: asyncio.subprocess.Process, kind: Kind, last: str) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the process, its git children, its command
        await asyncio.wait_for(proc.wait(), WAIT)
        self.ledger.kills[kind] += 1
        self.ledger.killed_after[last] += 1

    def _trigger(self, plan: Round, seen: int, kind: str) -> bool:
        if plan.kill_after is None:
            return False
        if isinstance(plan.kill_after, int):
            return seen >= plan.kill_after
        return kind == plan.kill_after

    async def run_round(self, plan: Round) -> dict[str, Any] | None:
        """Run one turn; its result when it finished, None when it was killed."""
        n = self.turn
        self.turn += 1
        spec = self._script(n)
        text = f"message {n}: write f{n % 3}.txt"
        log = self.logs / f"turn-{n}-{plan.kind}.log"
        if plan.kind == "server":
            return await self._server_round(plan, n, spec, text, log)
        return await self._cli_round(plan, spec, text, log)

    async def _cli_round(self, plan: Round, spec: str, text: str,
                         log: Path) -> dict[str, Any] | None:
        argv = [*PROGRAM, "chat", "--json", "--workspace", str(self.ws), "--model", spec]
        if self.ledger.session_id:
            argv += ["--session", self.ledger.session_id]
        proc = await self._start([*argv, text], log)
        assert proc.stdout is not None and proc.stdin is not None
        proc.stdin.close()
        inputs: dict[str, dict[str, Any]] = {}
        seen, last = 0, "start"
        killer: asyncio.TimerHandle | None = None
        killing = asyncio.get_running_loop().create_future()
        result: dict[str, Any] | None = None
        if plan.kill_after == 0:
            killer = asyncio.get_running_loop().call_later(
                plan.jitter, lambda: killing.done() or killing.set_result(None))
        while not killing.done():
            line = await self._readline_or(proc.stdout, killing)
            if line is None:
                break
            event = json.loads(line)
            if event.get("type") == "result":
                result = event["data"]
                continue
            self._note(event, inputs)
            seen, last = seen + 1, str(event.get("type"))
            if killer is None and self._trigger(plan, seen, last):
                killer = asyncio.get_running_loop().call_later(
                    plan.jitter, lambda: killing.done() or killing.set_result(None))
        if killing.done():
            await self._kill(proc, "cli", last)
            return None
        code = await asyncio.wait_for(proc.wait(), WAIT)
        _check(code == 0 and result is not None,
               f"chat exited {code} without a result: {self._tail(log)}")
        return result

    @staticmethod
    async def _readline_or(stream: asyncio.StreamReader,
                           stop: asyncio.Future[None]) -> bytes | None:
        """The next line, or None at end of stream or when ``stop`` is done first."""
        read = asyncio.ensure_future(stream.readline())
        done, _ = await asyncio.wait({read, stop}, timeout=WAIT,
                                     return_when=asyncio.FIRST_COMPLETED)
        if read not in done:
            read.cancel()
            with contextlib.suppress(BaseException):
                await read
            _check(stop.done(), f"no output for {WAIT:g}s")
            return None
        line = read.result()
        return line or None

    async def _server_round(self, plan: Round, n: int, spec: str, text: str,
                            log: Path) -> dict[str, Any] | None:
        proc = await self._start([*PROGRAM, "serve"], log)
        assert proc.stdout is not None and proc.stdin is not None
        reader, writer = proc.stdout, proc.stdin
        loop = asyncio.get_running_loop()
        waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        killing: asyncio.Future[None] = loop.create_future()
        inputs: dict[str, dict[str, Any]] = {}
        state = {"seen": 0, "last": "start", "armed": False}

        def send(message: Any) -> None:
            writer.write(encode(message))

        def on_event(event: dict[str, Any]) -> None:
            self._note(event, inputs)
            state["seen"] = int(state["seen"]) + 1
            state["last"] = str(event.get("type"))
            if state["armed"] and self._trigger(plan, int(state["seen"]), str(state["last"])):
                state["armed"] = False
                loop.call_later(plan.jitter,
                                lambda: killing.done() or killing.set_result(None))

        async def pump() -> None:
            while (msg := await read_frame(reader)) is not None:
                if "method" in msg and "id" in msg:  # a server request: nothing to approve
                    send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                elif msg.get("method") == "openprogram/event":
                    on_event(msg["params"])
                elif msg.get("id") in waiting:
                    waiting.pop(msg["id"]).set_result(msg)

        counter = iter(range(1, 1_000_000))

        async def call(method: str, params: Any) -> dict[str, Any]:
            msg_id = next(counter)
            fut: asyncio.Future[dict[str, Any]] = loop.create_future()
            waiting[msg_id] = fut
            send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            done, _ = await asyncio.wait({fut, killing, pumping}, timeout=WAIT,
                                         return_when=asyncio.FIRST_COMPLETED)
            _check(bool(done), f"{method}: no answer in {WAIT:g}s: {self._tail(log)}")
            if fut not in done:
                raise _Killed
            return fut.result()

        pumping = asyncio.ensure_future(pump())
        try:
            init = await call("initialize", {
                "processId": None, "rootUri": self.ws.as_uri(), "capabilities": {},
                "initializationOptions": {"permissionMode": "bypass"}})
            _check("result" in init, f"initialize failed: {init}")
            send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            if self.ledger.session_id:
                await self._read_back_wire(call)
            params: dict[str, Any] = {"text": text, "model": spec}
            if self.ledger.session_id:
                params["sessionId"] = self.ledger.session_id
            state["armed"] = True
            if plan.kill_after == 0:
                loop.call_later(plan.jitter, lambda: killing.done() or killing.set_result(None))
            reply = await call("openprogram/chat", params)
            _check("result" in reply, f"turn {n} failed: {reply}")
            result: dict[str, Any] = reply["result"]
            await call("shutdown", None)
            send({"jsonrpc": "2.0", "method": "exit", "params": None})
            writer.close()
            code = await asyncio.wait_for(proc.wait(), WAIT)
            _check(code == 0, f"server exited {code}: {self._tail(log)}")
            return result
        except _Killed:
            await self._kill(proc, "server", str(state["last"]))
            return None
        finally:
            pumping.cancel()
            with contextlib.suppress(BaseException):
                await pumping
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()

    @staticmethod
    def _tail(log: Path) -> str:
        try:
            return log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    # -- reading back ------------------------------------------------------------------------

    async def _read_back_wire(self, call: Callable[[str, Any], Any]) -> None:
        """The first thing a restarted server is asked: history and the session list."""
        sid = self.ledger.session_id
        history = await call("openprogram/history", {"sessionId": sid})
        _check("result" in history, f"history failed after a kill: {history}")
        listed = await call("openprogram/sessions", {})
        _check("result" in listed, f"sessions failed after a kill: {listed}")
        status = {s["id"]: s["status"] for s in listed["result"]["sessions"]}
        self._check_branch(history["result"]["nodes"], status.get(str(sid)), "over LSP")

    def read_back_local(self) -> None:
        """Read the session as another process does (recovery on read), then fsck both stores."""
        sid = self.ledger.session_id
        if sid is None:
            return
        store = SessionStore(self.home)
        status = {str(m["id"]): m.get("status") for m in store.list_sessions()}
        branch = [n.wire() for n in store.get_branch(sid)]
        every = store.nodes(sid)
        running = [n.id for n in every if n.status == "running"]
        _check(not running, f"nodes still running after a kill: {running}")
        self._check_branch(branch, status.get(sid), "in a new process")

    def _check_branch(self, nodes: list[dict[str, Any]], status: str | None, how: str) -> None:
        led = self.ledger
        _check(status != "running", f"session listed as running after a kill ({how})")
        running = [n["id"] for n in nodes if n.get("status") == "running"]
        _check(not running, f"history shows running turns after a kill ({how}): {running}")
        texts = [n["text"] for n in nodes if n["role"] == "user"]
        missing = [t for t in led.acked if t not in texts]
        _check(not missing, f"acknowledged messages missing ({how}): {missing}")
        _check([t for t in texts if t in led.acked] == led.acked,
               f"acknowledged messages out of order ({how}): {texts}")
        by_id = {n["id"]: n for n in nodes}
        for turn in sorted(led.cut):
            node = by_id.get(turn)
            _check(node is not None, f"the cut turn {turn} is not on the branch ({how})")
            assert node is not None
            # done when the kill came after the node was finalized, before the event was sent
            _check(node.get("status") in ("interrupted", "done"),
                   f"the cut turn {turn} is {node.get('status')} ({how})")
            led.settled[turn] = str(node.get("status"))
        led.cut.clear()
        for turn, was in led.settled.items():
            now = by_id.get(turn)
            _check(now is not None and now.get("status") == was,
                   f"turn {turn} was {was}, now {now and now.get('status')} ({how})")

    def fsck(self) -> None:
        """Both stores pass ``git fsck``; counts the git lock files a kill left."""
        repos = [p.parent for p in self.home.glob("sessions/*/.git/HEAD")]
        repos += [p.parent for p in self.home.glob("checkpoints/*/git/HEAD")]
        for repo in repos:
            r = subprocess.run(["git", "--git-dir", str(repo), "fsck", "--no-progress"],
                               capture_output=True, text=True, timeout=WAIT,
                               env={**self.env, "GIT_CONFIG_NOSYSTEM": "1"})
            _check(r.returncode == 0, f"git fsck failed in {repo}: {r.stdout}{r.stderr}")
        for lock in self.git_locks():
            self.ledger.locks_left[lock.name] += 1

    def git_locks(self) -> list[Path]:
        """Git lock files (ours are flocks and stay) under the state root."""
        return [p for p in self.home.rglob("*.lock")
                if p.name not in OUR_LOCKS and p.parent.name != "locks"]

    def after_kill(self) -> None:
        """What every restart must find."""
        self.fsck()

    def versions_in_checkpoints(self) -> set[tuple[str, str]]:
        """Every (path, content) of the agent's files in any commit of the checkpoint store."""
        found: set[tuple[str, str]] = set()
        for head in self.home.glob("checkpoints/*/git/HEAD"):
            git = ["git", "--git-dir", str(head.parent)]
            listing = subprocess.run([*git, "rev-list", "--all", "--objects"],
                                     capture_output=True, text=True, check=True, timeout=WAIT)
            blobs = {}
            for line in listing.stdout.splitlines():
                sha, _, path = line.partition(" ")
                if path.endswith(".txt"):
                    blobs[sha] = path
            if not blobs:
                continue
            batch = subprocess.run([*git, "cat-file", "--batch"], capture_output=True,
                                   input="\n".join(blobs).encode() + b"\n", check=True,
                                   timeout=WAIT).stdout
            pos = 0
            while pos < len(batch):
                header_end = batch.index(b"\n", pos)
                sha, _, size = batch[pos:header_end].decode().split(" ")
                body = batch[header_end + 1:header_end + 1 + int(size)]
                found.add((blobs[sha], body.decode(errors="replace")))
                pos = header_end + 1 + int(size) + 1
        return found

    def finish(self, result: dict[str, Any] | None) -> None:
        """The closing turn ran to the end; every acknowledged version is in a checkpoint."""
        _check(result is not None and result.get("status") == "done",
               f"the closing turn did not finish: {result}")
        assert result is not None
        _check(not result.get("warnings"), f"the closing turn warned: {result.get('warnings')}")
        _check(result.get("checkpoint") is not None, "the closing turn took no checkpoint")
        self.read_back_local()
        self.fsck()
        left = self.git_locks()
        _check(not left, f"git lock files left after a completed turn: {left}")
        missing = self.ledger.versions - self.versions_in_checkpoints()
        _check(not missing, f"agent file versions in no checkpoint: {sorted(missing)}")


class _Killed(Exception):
    """The round's process was killed while a request was outstanding."""


async def run(root: Path, rounds: list[Round], *,
              log: Callable[[str], None] | None = None) -> Ledger:
    """Run the rounds (each but the last expected to be killed), checking after each."""
    rig = Rig(root, log=log)
    result: dict[str, Any] | None = None
    for i, plan in enumerate(rounds):
        if i and plan.kind == "cli":
            rig.read_back_local()  # a server round reads back over LSP itself
        result = await rig.run_round(plan)
        if result is None:
            rig.after_kill()
        elif result.get("status") != "done":
            raise CrashFailure(f"turn {i} ended {result.get('status')}: {result}")
        rig.log(f"round {i + 1}/{len(rounds)} {plan.kind} "
                f"{'killed after ' + str(plan.kill_after) if result is None else 'finished'}")
    rig.finish(result)
    rig.ledger.interrupted = sum(
        1 for n in SessionStore(rig.home).nodes(str(rig.ledger.session_id))
        if n.status == "interrupted")
    return rig.ledger


def random_rounds(turns: int, rng: random.Random) -> list[Round]:
    """``turns`` rounds, most killed at a random event (+ up to 30 ms), the last one not."""
    out = []
    for _ in range(turns - 1):
        kind: Kind = "server" if rng.random() < 0.6 else "cli"
        if rng.random() < 0.15:
            out.append(Round(kind, None))
        else:
            out.append(Round(kind, rng.randint(0, 30), rng.uniform(0.0, 0.03)))
    out.append(Round("server", None))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.stress.crash",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", type=Path, default=None, help="run in DIR and keep it")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rounds = random_rounds(max(2, args.turns), random.Random(seed))
    root = args.keep or Path(tempfile.mkdtemp(prefix="op-crash-"))
    started = time.monotonic()
    print(f"seed {seed}, {len(rounds)} turns, in {root}", flush=True)
    try:
        ledger = asyncio.run(run(root, rounds, log=lambda line: print(line, flush=True)))
    except CrashFailure as exc:
        print(f"FAILED (seed {seed}, kept {root}): {exc}", file=sys.stderr)
        return 1
    kills = sum(ledger.kills.values())
    print(f"ok: {len(rounds)} turns, {kills} kill -9s ({dict(ledger.kills)}), "
          f"{len(ledger.acked)} acknowledged messages all present, "
          f"{ledger.interrupted} turns interrupted, {len(ledger.versions)} file versions all "
          f"checkpointed, git locks left by kills and taken over: {dict(ledger.locks_left)}, "
          f"{time.monotonic() - started:.0f}s")
    print(f"killed after: {dict(ledger.killed_after.most_common())}")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
