"""``parlour simulate``: reproducible results, the table, the JSON, seat rotation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parlour.cli import main
from parlour.games.apologies.model import Mode
from parlour.simulate import _lineup, simulate, wilson


def test_same_seed_same_results_and_rotation_credits_robots() -> None:
    first = simulate("apologies", ["random", "greedy"], 20, seed=3, options={"mode": Mode.STANDARD})
    again = simulate(
        "apologies", ["random", "greedy"], 20, seed=3, options={"mode": Mode.STANDARD}, workers=2
    )
    assert [r.wins for r in first.by_seat] == [r.wins for r in again.by_seat]
    assert sum(r.wins for r in first.by_seat) == 20 and sum(first.seat_win_rates) == pytest.approx(1.0)
    assert _lineup(["a", "b", "c"], 0, True) == ("a", "b", "c")
    assert _lineup(["a", "b", "c"], 1, True) == ("c", "a", "b")
    assert _lineup(["a", "b", "c"], 1, False) == ("a", "b", "c")


def test_wilson_interval() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.404, abs=0.001) and high == pytest.approx(0.596, abs=0.001)
    assert wilson(0, 0) == (0.0, 1.0)


def test_cli_prints_a_table_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.json"
    code = main(
        [
            "simulate",
            "--mode",
            "ADULT",
            "--seats",
            "greedy,random,random",
            "--games",
            "6",
            "--seed",
            "2",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "6 games of apologies" in captured.out and "95% CI" in captured.out and "median" in captured.out
    assert "6/6" in captured.err  # the progress bar
    data = json.loads(out.read_text())
    assert data["games"] == 6 and [s["robot"] for s in data["by_seat"]] == ["greedy", "random", "random"]
    assert {t["robot"] for t in data["timing"]} == {"greedy", "random"}


def test_cli_refuses_unknown_robots_and_games(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--seats", "greedy,genius", "--games", "2", "--quiet"]) == 2
    assert "no robot 'genius'" in capsys.readouterr().err
    assert main(["simulate", "--game", "chess", "--games", "2", "--quiet"]) == 2


def test_decision_times_are_credited_to_the_robot_that_decided() -> None:
    report = simulate("fish", ["search", "random"], 4, seed=1, options={"fish": 3})
    timing = {t.robot: t for t in report.timing}
    assert timing["search"].median_ms > 10 * timing["random"].median_ms
