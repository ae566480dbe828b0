"""run_command in the real bubblewrap sandbox (bwrap must be installed: scripts/install-sandbox).

No skip when bwrap is missing: CI installs it, and a missing sandbox is a failure.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.config import load_settings
from openprogram_lsp.core.errors import ToolError
from openprogram_lsp.store.session_store import SessionStore
from openprogram_lsp.tools.base import ToolContext, ToolOutput
from openprogram_lsp.tools.builtin.command import RunCommand
from openprogram_lsp.tools.limits import enforcement, limits_of
from openprogram_lsp.tools.sandbox import availability

SECRET = "sk-test-4f1b9e0c-never-visible"


def test_bwrap_is_installed_and_works() -> None:
    found = availability()
    assert found.ok, f"{found.reason} (run scripts/install-sandbox)"


async def run(ctx: ToolContext, command: str, timeout: float | None = None) -> ToolOutput:
    tool = RunCommand()
    args: dict[str, object] = {"command": command}
    if timeout is not None:
        args["timeout"] = timeout
    return await tool.run(tool.parse(args), ctx)


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace)


async def test_workspace_writable_rest_read_only_tmp_private(ctx: ToolContext, workspace: Path,
                                                             tmp_path: Path) -> None:
    (tmp_path / "beside.txt").write_text("outside the workspace\n")
    out = await run(ctx, "echo made > new.txt; touch /usr/x 2>&1; "
                         f"cat {tmp_path}/beside.txt 2>&1; echo t > /tmp/mine; ls /tmp")
    assert out.data["sandboxed"] is True, out.text
    assert (workspace / "new.txt").read_text() == "made\n"
    assert "Read-only file system" in out.text
    assert "outside the workspace" not in out.text  # /tmp is private: only the workspace is in
    assert not Path("/tmp/mine").exists()


async def test_no_server_process_and_no_key_in_proc(ctx: ToolContext,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = await run(ctx, "ls /proc | grep -c '^[0-9]'; cat /proc/*/environ | tr '\\0' '\\n'; "
                         "echo ppid=$PPID; env")
    assert SECRET not in out.text
    assert int(out.text.splitlines()[1]) <= 5  # bwrap's init, sh, ls, grep: nothing else


async def test_state_and_home_secrets_are_not_mounted(workspace: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "userhome"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / ".config" / "openprogram-lsp").mkdir(parents=True)
    (home / ".config" / "openprogram-lsp" / "notes.txt").write_text("cfg-secret\n")
    (home / ".netrc").write_text("machine x password netrc-secret\n")
    state = workspace / ".state"  # even a state root inside the workspace stays out of reach
    state.mkdir()
    (state / "rules.json").write_text("state-secret\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("OPENPROGRAM_HOME", str(state))
    # the settings name the state root and the app registers it (nothing below reads the
    # environment): build what `serve` builds
    build_dispatcher(AppConfig.from_settings(load_settings(workspace=workspace), workspace))
    # the home lives under /tmp here, so bind it in to see that each secret is masked
    from openprogram_lsp.tools import sandbox

    real = sandbox.bwrap_argv

    def with_home(bwrap: str, ws: Path, *, network: bool) -> list[str]:
        argv = real(bwrap, ws, network=network)
        i = argv.index("/dev/shm") + 1  # right after the private /tmp, before any mask
        return [*argv[:i], "--ro-bind", str(home), str(home), *argv[i:]]

    monkeypatch.setattr(sandbox, "bwrap_argv", with_home)
    ctx = ToolContext(workspace=workspace)
    out = await run(ctx, f"cat {home}/.ssh/id_ed25519 {home}/.netrc "
                         f"{home}/.config/openprogram-lsp/notes.txt .state/rules.json 2>&1; "
                         f"ls -a {home}")
    assert out.data["sandboxed"] is True
    for leaked in ("PRIVATE KEY", "cfg-secret", "netrc-secret", "state-secret"):
        assert leaked not in out.text, out.text
    assert (state / "rules.json").read_text() == "state-secret\n"


async def test_a_state_root_set_in_the_settings_is_hidden_too(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = workspace / ".configured-state"  # `home = ...` in config.toml, not the variable
    SessionStore(state)  # what app builds from the settings: it registers its directories
    (state / "secret.txt").write_text("configured-secret\n")
    monkeypatch.setenv("OPENPROGRAM_HOME", str(tmp_path / "elsewhere"))
    out = await run(ToolContext(workspace=workspace), "cat .configured-state/secret.txt 2>&1")
    assert out.data["sandboxed"] is True
    assert "configured-secret" not in out.text, out.text


class _Listener:
    """A loopback TCP server outside the sandbox that answers one line."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(5)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            conn.sendall(b"hello-from-outside\n")

    def close(self) -> None:
        if self.thread.is_alive():  # nobody came (network off): wake accept() ourselves
            with socket.create_connection(("127.0.0.1", self.port), 1):
                pass
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.mark.parametrize("network", ["on", "off"])
async def test_network_setting(workspace: Path, network: str) -> None:
    ctx = ToolContext(workspace=workspace, settings=load_settings(
        env={"OPENPROGRAM_SANDBOX_NETWORK": network}, user_file=False))
    srv = _Listener()
    try:
        # bash's /dev/tcp, not this test's Python: a venv under /tmp is not in the box (its
        # /tmp is private), and the probe must be seen to run and to fail for the network
        probe = f"echo probe-ran; exec 3<>/dev/tcp/127.0.0.1/{srv.port} && head -c 100 <&3"
        out = await run(ctx, f"bash -c '{probe}' 2>&1")
    finally:
        srv.close()
    assert "probe-ran" in out.text, out.text
    if network == "on":
        assert "hello-from-outside" in out.text, out.text
    else:
        assert "hello-from-outside" not in out.text
        assert "Connection refused" in out.text or "Network is unreachable" in out.text, out.text


async def test_required_without_bwrap_refuses_and_auto_says_so(
        ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    os.symlink("/bin/sh", empty / "sh")
    monkeypatch.setenv("PATH", str(empty))
    required = dataclasses.replace(ctx, settings=load_settings(
        env={"OPENPROGRAM_SANDBOX": "required"}, user_file=False))
    with pytest.raises(ToolError, match="sandbox is required but bubblewrap"):
        await run(required, "echo never")
    out = await run(ctx, "echo ran")  # auto, the default
    assert out.data["sandboxed"] is False
    assert "ran" in out.text and "not sandboxed: bubblewrap (bwrap) is not installed" in out.text


def _alive(marker: str) -> list[int]:
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    pids.append(int(pid))
        except OSError:
            continue
    return pids


async def test_timeout_and_cancel_end_everything_inside(ctx: ToolContext) -> None:
    out = await run(ctx, "sleep 31.5 & sleep 31.5", timeout=0.5)
    assert out.is_error and "timeout" in out.text
    task = asyncio.create_task(run(ctx, "sleep 32.5 & sleep 32.5"))
    for _ in range(200):
        if _alive("32.5"):
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(200):
        if not _alive("31.5") and not _alive("32.5"):
            break
        await asyncio.sleep(0.01)
    assert not _alive("31.5") and not _alive("32.5")


async def _gone(marker: str) -> bool:
    """Whether no process carries ``marker`` (bounded: 5 s for the kernel to finish a kill)."""
    for _ in range(500):
        if not _alive(marker):
            return True
        await asyncio.sleep(0.01)
    return False


@pytest.mark.parametrize("mode", ["required", "off"])
async def test_a_cancel_at_any_point_of_the_start_ends_everything(workspace: Path,
                                                                  mode: str) -> None:
    """Cancelled after 0, 1, 2 ... event-loop turns: before the spawn, while bwrap sets its
    sandbox up, once the command runs. bwrap runs the command in a session of its own, so a
    kill of bwrap's group alone left it running when the cancel came during the set-up."""
    ctx = ToolContext(workspace=workspace, settings=load_settings(
        env={"OPENPROGRAM_SANDBOX": mode}, user_file=False))
    for turns in range(12):
        marker = f"33.{len(mode)}{turns:02d}5"
        task = asyncio.create_task(run(ctx, f"sleep {marker} & sleep {marker}"))
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await _gone(marker), f"cancelled after {turns} turns: {_alive(marker)} live"


@pytest.fixture
def no_death_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    """bwrap without --die-with-parent: its sandbox then never dies with bwrap, as when bwrap
    is killed while it sets the sandbox up (it asks for the signal only after that)."""
    from openprogram_lsp.tools import sandbox

    real = sandbox.bwrap_argv

    def without(bwrap: str, ws: Path, *, network: bool) -> list[str]:
        return [a for a in real(bwrap, ws, network=network) if a != "--die-with-parent"]

    monkeypatch.setattr(sandbox, "bwrap_argv", without)


@pytest.mark.usefixtures("no_death_signal")
async def test_the_kill_reaches_the_sandbox_itself(ctx: ToolContext) -> None:
    out = await run(ctx, "sleep 34.5 & sleep 34.5", timeout=0.5)
    assert out.data["sandboxed"] is True and "timeout" in out.text
    assert await _gone("34.5")
    task = asyncio.create_task(run(ctx, "sleep 35.5 & sleep 35.5"))
    for _ in range(500):
        if len(_alive("35.5")) >= 4:  # bwrap, its init, sh, sleep: the command runs
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _gone("35.5")


@pytest.mark.parametrize("mode", ["required", "off"])
async def test_what_a_command_leaves_running_ends_with_it(workspace: Path, mode: str) -> None:
    ctx = ToolContext(workspace=workspace, settings=load_settings(
        env={"OPENPROGRAM_SANDBOX": mode}, user_file=False))
    out = await run(ctx, f"sleep 36.{len(mode)}5 >/dev/null 2>&1 & echo started", timeout=60)
    assert out.data["sandboxed"] is (mode == "required")
    assert not out.is_error and "started" in out.text, out.text
    assert await _gone(f"36.{len(mode)}5")


async def test_an_unsandboxed_cancel_reaches_a_child_in_its_own_session(
        workspace: Path) -> None:
    ctx = ToolContext(workspace=workspace, settings=load_settings(
        env={"OPENPROGRAM_SANDBOX": "off"}, user_file=False))
    task = asyncio.create_task(run(ctx, "setsid sleep 37.5 & sleep 37.6"))
    for _ in range(500):
        if _alive("sleep 37.5") and _alive("sleep 37.6"):
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _gone("37.5") and await _gone("37.6")


async def test_output_is_capped_in_bytes_and_lines(ctx: ToolContext) -> None:
    out = await run(ctx, "seq 1 2000000")
    assert len(out.text.encode()) < 40_000 and out.text.count("\n") < 1_100
    assert "truncated" in out.text and "2000000" in out.text  # the tail is kept


def _chat_events(ws: Path, home: Path, command: str, **env: str) -> str:
    """``openprogram-lsp chat --json`` running one command: its whole event stream."""
    full = {**os.environ, "OPENPROGRAM_HOME": str(home), "OPENAI_API_KEY": SECRET,
            "ANTHROPIC_BASE_URL": f"https://user:{SECRET}@example.invalid", **env}
    full.pop("OPENPROGRAM_MODEL", None)
    r = subprocess.run([sys.executable, "-m", "openprogram_lsp", "chat", "--workspace", str(ws),
                        "--permission-mode", "bypass", "--json", f"run {command}"],
                       env=full, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _chat(ws: Path, home: Path, command: str, **env: str) -> str:
    finished = [json.loads(x) for x in _chat_events(ws, home, command, **env).splitlines()
                if json.loads(x)["type"] == "tool.finished"]
    return str(finished[0]["data"]["output"])


def test_real_server_keys_not_readable_sandboxed(workspace: Path, home: Path) -> None:
    out = _chat(workspace, home, "cat /proc/*/environ | tr '\\0' '\\n'; "
                                 "tr '\\0' '\\n' < /proc/$PPID/environ; echo END")
    assert "END" in out and SECRET not in out


def test_real_server_keys_not_readable_without_sandbox(workspace: Path, home: Path) -> None:
    """Sandbox off: the server's /proc environ still holds no key (names stay, values blank).

    What a command still sees is documented in docs/sandbox.md.
    """
    out = _chat(workspace, home, "tr '\\0' '\\n' < /proc/$PPID/environ; echo ppid=$PPID; env",
                OPENPROGRAM_SANDBOX="off")
    assert "not sandboxed: the sandbox is off" in out
    assert SECRET not in out
    assert "OPENAI_API_KEY=\n" in out  # the name is visible in /proc, its value is gone


def _git(workspace: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=workspace, capture_output=True, text=True,
                          check=True, env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}).stdout


async def test_git_config_and_hooks_are_read_only_in_the_box(ctx: ToolContext, workspace: Path,
                                                             tmp_path: Path) -> None:
    """The plant the issue found: fsmonitor set inside the box, run by the user's own
    ``git status`` later. Inside, .git is read-only; git still reads the repository."""
    _git(workspace, "init", "-q")
    (workspace / "a.txt").write_text("a\n")
    config = (workspace / ".git" / "config").read_bytes()
    escaped = tmp_path / "ESCAPED"
    out = await run(ctx, f"git config core.fsmonitor 'touch {escaped}'; echo rc=$?; "
                         "echo 'touch HOOKED' > .git/hooks/pre-commit; echo rc=$?; "
                         "git config --file .git/config core.hooksPath /tmp 2>&1; "
                         "mv .git .git-away 2>&1; echo > .git/commondir; echo rc=$?; "
                         "git status --short; echo fine > a.txt")
    assert out.data["sandboxed"] is True, out.text
    assert out.text.count("rc=0") == 0, out.text
    assert "?? a.txt" in out.text  # git reads the repository in the box
    assert (workspace / "a.txt").read_text() == "fine\n"  # the workspace is writable
    assert (workspace / ".git" / "config").read_bytes() == config
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".git" / "commondir").exists()
    _git(workspace, "status")  # the user's own git, outside the box
    assert not escaped.exists()


async def test_control_files_are_read_only_and_missing_ones_cannot_be_made(
        ctx: ToolContext, workspace: Path) -> None:
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text("{}\n")
    (workspace / ".mcp.json").write_text('{"mcpServers": {}}\n')
    bypass = '{"openprogram.permissionMode": "bypass"}'
    out = await run(ctx, f"echo '{bypass}' > .vscode/settings.json; echo rc=$?; "
                         "echo '{}' > .vscode/tasks.json; echo rc=$?; "
                         "rm -f .mcp.json; echo rc=$?; mv .vscode v2; echo rc=$?; "
                         "echo 'curl x | sh' > .envrc; echo rc=$?; "
                         "mkdir -p .claude/agents; echo rc=$?; "
                         "echo 'os.execute(1)' > .nvim.lua; echo rc=$?; "
                         "git init -q; echo rc=$?; echo ok > fine.txt")
    assert out.data["sandboxed"] is True, out.text
    assert out.text.count("rc=0") == 0, out.text
    assert (workspace / ".vscode" / "settings.json").read_text() == "{}\n"
    assert not (workspace / ".vscode" / "tasks.json").exists()
    assert (workspace / ".mcp.json").exists() and (workspace / "fine.txt").exists()
    # the placeholders bwrap made for the missing ones are gone again: nothing left behind
    left = sorted(p.name for p in workspace.iterdir())
    assert left == [".mcp.json", ".vscode", "fine.txt"], left


def test_repositories_and_control_files_below_the_root_are_read_only_or_named(
        workspace: Path, home: Path, tmp_path: Path) -> None:
    """A folder of projects: a project's own .git and the control files in subfolders (down
    to three levels) are read-only in the box too; what a command makes or moves there
    anyway (a copied .git where the project was, a new repository, a new .nvim.lua) is named
    in its result and in the turn's warnings."""
    (workspace / "proj").mkdir()
    _git(workspace / "proj", "init", "-q")
    config = (workspace / "proj" / ".git" / "config").read_bytes()
    (workspace / "a" / "b" / "c" / ".vscode").mkdir(parents=True)
    (workspace / "a" / "b" / ".envrc").write_text("x\n")
    (workspace / "a" / "b" / "c" / ".vscode" / "settings.json").write_text("{}\n")
    (workspace / "d" / "1" / "2" / "3").mkdir(parents=True)  # four levels down: not looked at
    (workspace / "d" / "1" / "2" / "3" / ".envrc").write_text("deep\n")
    escaped = tmp_path / "ESCAPED"
    stream = _chat_events(workspace, home, f"git -C proj config core.fsmonitor 'touch {escaped}'"
                          "; echo rc=$?; echo y > a/b/.envrc; echo rc=$?; "
                          "echo '{}' > a/b/c/.vscode/settings.json; echo rc=$?; "
                          "rm -rf proj/.git; mv a/b/.envrc a/b/envrc 2>&1; echo rc=$?; "
                          "mv proj proj2 && mkdir proj && cp -a proj2/.git proj/.git && "
                          "mkdir -p new/x && git init -q new/x && echo > c.nvim && "
                          "mkdir k && mv c.nvim k/.nvim.lua && echo ok > d/1/2/3/.envrc; "
                          "echo END")
    events = [json.loads(x) for x in stream.splitlines()]
    [out] = [e["data"]["output"] for e in events if e["type"] == "tool.finished"]
    assert "END" in out and out.count("rc=0") == 0, out
    assert (workspace / "proj2" / ".git" / "config").read_bytes() == config
    assert (workspace / "a" / "b" / ".envrc").read_text() == "x\n"
    assert (workspace / "a" / "b" / "c" / ".vscode" / "settings.json").read_text() == "{}\n"
    named = ("[this command made or moved files that can make commands run later, outside the "
             "sandbox and unasked: k/.nvim.lua (Neovim runs it (exrc)); new/x/.git (a git "
             "repository: its config and hooks run with git there); proj/.git (a git "
             "repository: its config and hooks run with git there); proj2/.git (a git "
             "repository: its config and hooks run with git there). Review them before using "
             "them]")
    assert named in out, out
    [result] = [e["data"] for e in events if e["type"] == "result"]
    assert result["warnings"] == [f"run_command: {named}"], result
    again = _chat(workspace, home, "echo quiet")
    assert "made or moved" not in again, again
    _git(workspace / "proj2", "status")  # the user's own git in the project, outside the box
    assert not escaped.exists()


async def test_placeholders_stay_while_any_command_uses_them(ctx: ToolContext,
                                                              workspace: Path) -> None:
    """Two commands at once: the first one's end must not remove the mount point the second
    still stands on (an unlinked mount point would let it create the file)."""
    slow = asyncio.create_task(run(ctx, "sleep 1.5; echo planted > .envrc; echo rc=$?"))
    for _ in range(100):  # bounded: until the first sandbox has made its mount point
        if (workspace / ".envrc").exists():
            break
        await asyncio.sleep(0.05)
    quick = await run(ctx, "true")
    assert quick.data["sandboxed"] is True
    assert (workspace / ".envrc").exists()  # still the slow one's placeholder
    out = await slow
    assert "rc=0" not in out.text, out.text
    assert not (workspace / ".envrc").exists()


def _limited(workspace: Path, processes: int, memory_mb: int) -> ToolContext:
    return ToolContext(workspace=workspace, settings=load_settings(
        env={"OPENPROGRAM_SANDBOX_MAX_PROCESSES": str(processes),
             "OPENPROGRAM_SANDBOX_MAX_MEMORY_MB": str(memory_mb)}, user_file=False))


# 2,000 background processes at once unless a limit stops it (bounded: never a real bomb);
# ``started`` (a builtin's write: no fork) says how many it got before a fork failed
SWARM = "i=0; while [ $i -lt 2000 ]; do sleep 4 & i=$((i+1)); echo $i > started; done"


def _started(where: Path) -> int:
    return int((where / "started").read_text())


def _how_limits_hold(ctx: ToolContext) -> str:
    """What the sandbox status says of the limits here (tools.limits.enforcement): the tests
    below check that it is true, whichever it is on the machine running them."""
    return enforcement(limits_of(ctx.settings))


async def test_a_process_swarm_is_bounded_by_the_limit_and_named(workspace: Path) -> None:
    ctx = _limited(workspace, 64, 1024)
    held = _how_limits_hold(ctx)
    out = await run(ctx, SWARM, timeout=60)
    assert out.data["sandboxed"] is True, out.text
    if held.endswith("as root the process limit does not hold"):
        # Root where no cgroup may be made (a chroot or container without one; the fresh-Debian
        # chroot of scripts/ci-fresh-debian): RLIMIT_NPROC does not bind root, and the status
        # says so. It is true: the swarm ran whole, and no note claims a limit was reached.
        assert _started(workspace) == 2000, out.text
        assert "process limit" not in out.text, out.text
        return
    assert held in ("held by a cgroup", "held by rlimits only (no cgroup may be made here)")
    assert 0 < _started(workspace) < 64, out.text
    assert "[the command reached the sandbox's process limit (64, [sandbox] max_processes)]" \
        in out.text


async def test_a_big_allocation_is_refused_and_named(workspace: Path) -> None:
    ctx = _limited(workspace, 256, 200)
    held = _how_limits_hold(ctx)
    py = os.path.realpath(sys.executable)  # not the venv's link: under /tmp the box hides it
    one = f"{py} -c \"b = b'x' * (1024 * 2**20)\"; echo rc=$?"
    out = await run(ctx, one, timeout=60)
    assert "rc=1" in out.text and "MemoryError" in out.text, out.text  # the rlimit: always
    assert "the sandbox's memory limit (200 MiB, [sandbox] max_memory_mb)" in out.text
    # several processes each under the limit, together over it: the cgroup stops them
    many = " ".join(f"{py} -c \"import time; b = b'x' * (90 * 2**20); "
                    "time.sleep(3)\" &" for _ in range(4)) + " wait; echo all-done"
    out = await run(ctx, many, timeout=60)
    if held.startswith("held by rlimits only"):
        # No cgroup may be made here and the status says so: RLIMIT_DATA bounds each process,
        # not their sum (docs/decisions/sandbox-limits.md), so all four run to the end.
        assert "all-done" in out.text and "memory limit" not in out.text, out.text
        return
    assert held == "held by a cgroup"
    assert "[the command reached the sandbox's memory limit (200 MiB" in out.text, out.text


def test_the_process_rlimit_counts_only_the_boxs_processes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a cgroup (an ordinary user may have none to make), RLIMIT_NPROC inside bwrap's
    own user namespace bounds the box alone: the user's other processes do not count."""
    from openprogram_lsp.tools import sandbox
    from openprogram_lsp.tools.sandbox import plan, sandbox_settings
    monkeypatch.setattr(sandbox, "hidden_paths", list)  # root's own dirs: not nobody's to hide
    ws = tmp_path / "ws"
    ws.mkdir()
    tmp_path.chmod(0o755)
    ws.chmod(0o777)
    box = sandbox_settings(load_settings(env={"OPENPROGRAM_SANDBOX_MAX_PROCESSES": "40"},
                                         user_file=False))
    how = plan(ws, box, availability())
    assert how.sandboxed and "--nproc=40" in " ".join(how.inner)
    # as root there is no user namespace of the box's own: run it as an ordinary user then
    user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] \
        if os.getuid() == 0 else []
    parents = [p for p in tmp_path.parents if p != Path("/")]
    for p in parents:  # nobody must reach the workspace
        if os.getuid() == 0:
            p.chmod(p.stat().st_mode | 0o111)
    done = subprocess.run([*user, *how.prefix, *how.inner, "/bin/sh", "-c", SWARM], cwd=ws,
                          capture_output=True, text=True, timeout=120, check=False)
    assert 0 < _started(ws) < 40, done.stdout + done.stderr


MYKEY = "mykey-value-1f2e3d4c5b6a"  # held in a variable no name pattern calls a credential


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_the_configured_key_variable_never_reaches_a_command_nor_the_store(
        workspace: Path, home: Path, tmp_path: Path, sandbox: str) -> None:
    """``api_key_env = "MYKEY"``: no command's environment, no /proc of the server, and a
    command that prints the value anyway gets it redacted in the events and the session."""
    config = tmp_path / "xdg" / "openprogram-lsp"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[providers.openai]\napi_key_env = "MYKEY"\n')
    (workspace / "leak.txt").write_text(f"the key is {MYKEY}\n")
    stream = _chat_events(workspace, home, "env; echo ==; tr '\\0' '\\n' < /proc/$PPID/environ;"
                          " echo ==; cat leak.txt; echo END", MYKEY=MYKEY,
                          XDG_CONFIG_HOME=str(tmp_path / "xdg"), OPENPROGRAM_SANDBOX=sandbox)
    finished = [json.loads(x)["data"]["output"] for x in stream.splitlines()
                if json.loads(x)["type"] == "tool.finished"]
    env_part, proc_part, printed = finished[0].split("==")
    assert "END" in printed and "MYKEY" not in env_part
    if sandbox == "off":  # the server's own block: the name, no value
        assert "MYKEY=\n" in proc_part, proc_part
    assert "the key is [redacted: a configured API key]" in printed
    assert MYKEY not in stream  # no event carried it (tool.output, tool.finished)
    sid = next(json.loads(x)["sessionId"] for x in stream.splitlines()
               if json.loads(x).get("sessionId"))
    history = subprocess.run([sys.executable, "-m", "openprogram_lsp", "history", "--json",
                              "--workspace", str(workspace), "--home", str(home), sid],
                             capture_output=True, text=True, timeout=60, check=True).stdout
    assert "the key is [redacted: a configured API key]" in history  # the stored session
    assert MYKEY not in history


async def test_a_state_root_inside_a_read_only_control_dir_stays_hidden(
        workspace: Path) -> None:
    """Binding `.openprogram` read-only must not bring back our state hidden inside it."""
    state = workspace / ".openprogram" / "state"
    SessionStore(state)  # what app builds from the settings: it registers its directories
    (state / "sessions.txt").write_text("state-secret\n")
    out = await run(ToolContext(workspace=workspace),
                    "cat .openprogram/state/sessions.txt 2>&1; "
                    "touch .openprogram/x 2>&1; echo END")
    assert out.data["sandboxed"] is True and "END" in out.text, out.text
    assert "state-secret" not in out.text
    assert not (workspace / ".openprogram" / "x").exists()
