"""The estimator, the window override, the output reserve and per-model calibration."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from openprogram_lsp.context.budget import (
    Calibration,
    estimate_text,
    output_reserve,
    resolve_window,
)
from openprogram_lsp.core.units import parse_window


def test_estimates_ascii_and_wide_text() -> None:
    assert estimate_text("") == 0
    assert estimate_text("abcd" * 100) == 100
    assert estimate_text("漢字" * 50) >= 100  # about one token per CJK character
    assert estimate_text("abcd" * 25 + "漢" * 10) == 25 + 10


def test_window_override_wins() -> None:
    assert resolve_window(128_000, 8000) == 8000
    assert resolve_window(128_000, None) == 128_000
    assert resolve_window(100, None) == 1024
    assert parse_window("12") is None and parse_window("1m") == 1_000_000


def test_output_reserve_is_capped_by_a_quarter_of_small_windows() -> None:
    assert output_reserve(4096, 128_000) == 4096
    assert output_reserve(4096, 8000) == 2000
    assert output_reserve(100, 8000) == 100


def test_calibration_converges_on_the_reported_ratio(tmp_path: Path) -> None:
    cal = Calibration(tmp_path / "cal.json", alpha=0.3)
    assert cal.ratio("m") == 1.0
    rng = random.Random(7)
    true_ratio = 1.37
    for _ in range(40):
        est = rng.randint(500, 50_000)
        reported = round(est * true_ratio * rng.uniform(0.97, 1.03))
        cal.observe("m", est, reported)
    assert abs(cal.ratio("m") - true_ratio) < 0.05
    assert cal.samples("m") == 40
    assert cal.ratio("other") == 1.0  # per model
    # persisted: a new process starts from the learned ratio (saved once it moved by 0.5%,
    # at most every SAVE_EVERY seconds and at exit, which flush stands for here)
    cal.flush()
    saved = Calibration(tmp_path / "cal.json").ratio("m")
    assert abs(saved - cal.ratio("m")) <= Calibration.SAVE_STEP * saved
    stamp = (tmp_path / "cal.json").stat().st_mtime_ns
    for _ in range(20):  # converged: the file is not rewritten for every turn
        cal.observe("m", 1000, round(1000 * cal.ratio("m")))
    assert (tmp_path / "cal.json").stat().st_mtime_ns == stamp


def test_a_moving_ratio_is_written_at_most_every_save_every_seconds_and_at_exit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openprogram_lsp.context import budget
    now = [1000.0]
    monkeypatch.setattr(budget.time, "monotonic", lambda: now[0])
    path = tmp_path / "cal.json"
    cal = Calibration(path, alpha=0.5)
    cal.observe("m", 1000, 2000)  # a model's first ratio: written at once
    assert Calibration(path).ratio("m") == 2.0
    stamp = path.stat().st_mtime_ns
    cal.observe("m", 1000, 1000)  # moved, but written less than SAVE_EVERY ago: waits
    assert path.stat().st_mtime_ns == stamp and Calibration(path).ratio("m") == 2.0
    now[0] += Calibration.SAVE_EVERY
    cal.observe("m", 1000, 1000)  # the first observation past it writes what it learned
    assert Calibration(path).ratio("m") == cal.ratio("m") == 1.25
    cal.observe("m", 1000, 4000)
    assert Calibration(path).ratio("m") == 1.25
    budget._flush_unsaved()  # what the interpreter's exit runs
    assert Calibration(path).ratio("m") == cal.ratio("m") == 2.625
    gone = Calibration(tmp_path / "home" / "cal.json", alpha=0.5)
    gone.observe("m", 1000, 2000)
    gone.observe("m", 1000, 1000)
    (tmp_path / "home" / "cal.json").unlink()
    (tmp_path / "home").rmdir()  # a home removed before the exit: not made again
    budget._flush_unsaved()
    assert not (tmp_path / "home").exists()


def test_calibration_ignores_nonsense_and_clamps_outliers() -> None:
    cal = Calibration()
    assert cal.observe("m", 0, 100) == 1.0
    assert cal.observe("m", 100, 0) == 1.0
    assert cal.observe("m", 100, 100_000) == 4.0
