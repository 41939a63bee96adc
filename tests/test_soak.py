"""A short, seeded slice of the soak (bench/soak.py): the same code, 60 games of every kind."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[1] / "bench" / "soak.py"


def test_a_short_soak_plays_every_kind_of_game_and_reports_rss(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("bench_soak", SOAK)
    assert spec is not None and spec.loader is not None
    soak = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = soak  # its dataclasses look their module up by name
    spec.loader.exec_module(soak)
    code = soak.main(["--games", "60", "--every", "20", "--workers", "2", "--seed", "3", "--no-check"])
    out = capsys.readouterr().out
    assert code == 0, out
    reports = re.findall(r"^ +(\d+) games  server RSS +([\d.]+) MiB$", out, re.MULTILINE)
    assert [games for games, _ in reports] == ["20", "40", "60"]
    assert all(float(rss) > 10 for _, rss in reports)
    counts = re.search(r"60 games in [\d.]+ s \([\d.]+ games/s\): (.*)$", out, re.MULTILINE)
    assert counts is not None
    assert counts.group(1) == "apologies 20, async-fish 10, async-tsuro 10, fish 10, tsuro 10"
    assert "RSS after game 20" in out
