"""What finding one line of a big file costs the model: grep + a ranged read_file against a
whole-file read, each through a real turn (scripted model, the real dispatcher and tools).

The file has 5,000 lines (~250 KB, under the old read_file's 256 KiB window, so the old tool
returned all of it); the answer is on line 4,000. Figures, all from the same run:

- ranged: the bytes of the tool results the model got from ``grep`` (the line number) and
  ``read_file`` with ``offset``/``limit`` (20 lines around it);
- whole (old): what the old ``read_file`` returned, the whole file's text, read in this run;
- whole (paged): the new ``read_file`` paging through the file to line 4,000 (each page
  reading on at the offset the last one gave), through a real turn.

Bytes are deterministic; the turns' wall times are medians of interleaved rounds (A B A B),
reported beside each other too.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _util import report
from openprogram_lsp.app import AppConfig, build_dispatcher
from openprogram_lsp.core.types import TurnRequest
from openprogram_lsp.dispatcher import Dispatcher
from openprogram_lsp.providers.scripted import reset_scripts
from openprogram_lsp.tools.builtin.descriptions import READ_PAGE_LINES
from openprogram_lsp.tools.builtin.read import paginate

LINES = 5_000
ANSWER_LINE = 4_000
ROUNDS = 9


def _file() -> str:
    out = []
    for i in range(1, LINES + 1):
        if i == ANSWER_LINE:
            out.append("RETRY_LIMIT = 7  # the answer: how many times a request is retried")
        else:
            out.append(f"value_{i:05d} = compute({i}, scale=0.5)  # filler")
    return "\n".join(out) + "\n"


def _page_starts() -> list[int]:
    """Where each page of read_file starts, up to the page holding the answer (as the model
    reads on with each page's ``offset``)."""
    lines = [(line, len(line)) for line in _file().splitlines()]
    starts, offset = [], 1
    while offset <= ANSWER_LINE:
        starts.append(offset)
        page = paginate(lines, offset, READ_PAGE_LINES)
        if page.next_offset is None:  # the last page
            break
        offset = page.next_offset
    return starts


def _call(name: str, **arguments: object) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _dispatcher(root: Path, name: str, script: list[dict[str, Any]]) -> tuple[Dispatcher, Path]:
    ws, home = root / name / "ws", root / name / "home"
    ws.mkdir(parents=True)
    (ws / "settings.py").write_text(_file())
    path = root / name / "script.json"
    path.write_text(json.dumps(script))
    return build_dispatcher(AppConfig(workspace=ws, home=home, model=f"scripted:{path}",
                                      permission_mode="bypass")), ws


def _turn(d: Dispatcher) -> tuple[int, list[str]]:
    """One turn: the bytes of the tool results the model was given, and the results."""
    reset_scripts()
    r = d.process_user_turn(TurnRequest(text="What is RETRY_LIMIT in settings.py?"))
    assert r.status == "done", r.error
    calls = d.services.store.get_node(r.session_id, r.assistant_node_id).tool_calls or []
    outs = [c.output or "" for c in calls]
    return sum(len(o.encode()) for o in outs), outs


def main() -> None:
    ranged_script = [_call("grep", pattern="RETRY_LIMIT =", path="settings.py"),
                     _call("read_file", path="settings.py", offset=ANSWER_LINE - 10, limit=20),
                     {"text": "RETRY_LIMIT is 7."}]
    paged_script = [_call("read_file", path="settings.py", **({"offset": o} if o > 1 else {}))
                    for o in _page_starts()] + [{"text": "RETRY_LIMIT is 7."}]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ranged, ws = _dispatcher(root, "ranged", ranged_script)
        paged, _ = _dispatcher(root, "paged", paged_script)
        ranged_bytes, ranged_outs = _turn(ranged)
        assert f"settings.py:{ANSWER_LINE}: RETRY_LIMIT = 7" in ranged_outs[0], ranged_outs[0]
        assert f"{ANSWER_LINE:>6}\tRETRY_LIMIT = 7" in ranged_outs[1]
        paged_bytes, paged_outs = _turn(paged)
        assert any("RETRY_LIMIT = 7" in o for o in paged_outs)
        # the old read_file: the whole text, up to its 256 KiB window
        old_whole = min(len((ws / "settings.py").read_bytes()), 256 * 1024)
        runs: dict[str, Callable[[], tuple[int, list[str]]]] = {
            "ranged": lambda: _turn(ranged), "paged": lambda: _turn(paged)}
        times: dict[str, list[float]] = {k: [] for k in runs}
        for i in range(ROUNDS + 1):  # one warm-up round, then A B A B
            for key, fn in runs.items():
                t0 = time.perf_counter()
                fn()
                if i:
                    times[key].append(time.perf_counter() - t0)
    report("grep + ranged read_file: tool-result bytes", ranged_bytes, old_whole, unit="B",
           target="<= 0.20 x the old whole-file read (the whole 5,000-line file)")
    report("grep + ranged read_file: tool-result bytes", ranged_bytes, paged_bytes, unit="B",
           target="baseline = paging read_file through the file to line 4,000")
    report("read_file paging to line 4,000: tool-result bytes", paged_bytes, old_whole,
           unit="B", target="baseline = the old whole-file read")
    med = {k: statistics.median(v) for k, v in times.items()}
    report("turn: grep + ranged read_file (wall)", med["ranged"], med["paged"],
           target=f"baseline = the paging turn; medians of {ROUNDS} interleaved rounds")
    ratio = ranged_bytes / old_whole
    print(f"ranged/whole = {ratio:.4f} ({'PASS' if ratio <= 0.20 else 'FAIL'}: at most 0.20)")


if __name__ == "__main__":
    main()
