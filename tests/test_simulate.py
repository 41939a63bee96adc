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
    assert (
        "6 games of apologies (ADULT mode), seed 2" in captured.out
        and "95% CI" in captured.out
        and "median" in captured.out
    )
    assert "6/6" in captured.err  # the progress bar
    data = json.loads(out.read_text())
    assert data["games"] == 6 and [s["robot"] for s in data["by_seat"]] == ["greedy", "random", "random"]
    assert {t["robot"] for t in data["timing"]} == {"greedy", "random"}


def test_cli_refuses_unknown_robots_and_games(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--seats", "greedy,genius", "--games", "2", "--quiet"]) == 2
    assert "no robot 'genius'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit:
        main(["simulate", "--game", "chess", "--games", "2", "--quiet"])
    assert exit.value.code == 2 and "invalid choice: 'chess'" in capsys.readouterr().err


def test_decision_times_are_credited_to_the_robot_that_decided() -> None:
    report = simulate("fish", ["search", "random"], 4, seed=1, options={"fish": 3})
    timing = {t.robot: t for t in report.timing}
    assert timing["search"].median_ms > 10 * timing["random"].median_ms


@pytest.mark.parametrize(
    ("game", "robots"), [("fish", ["alphabeta", "greedy"]), ("tsuro", ["lookahead", "greedy", "greedy"])]
)
def test_every_game_has_its_own_default_line_up(
    game: str, robots: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.json"
    assert main(["simulate", "--game", game, "--games", "2", "--quiet", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.startswith(f"2 games of {game}, seed 7, line-up rotated every game: ")
    assert [s["robot"] for s in json.loads(out.read_text())["by_seat"]] == robots


def test_mode_is_refused_where_it_means_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--game", "fish", "--mode", "ADULT", "--games", "1", "--quiet"]) == 2
    assert "--mode is for apologies only" in capsys.readouterr().err


def test_the_header_is_words_and_wins_are_whole_games_without_ties(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["simulate", "--seats", "greedy,random", "--games", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    header, columns, *rows = out.splitlines()
    assert header.startswith("4 games of apologies (STANDARD mode), seed 7, line-up rotated every game")
    assert "{" not in header and "tied" not in header
    assert columns.split()[:4] == ["entry", "robot", "wins", "win"]
    wins = [int(row.split()[2]) for row in rows[:2]]  # integers: int() refuses "2.0"
    assert sum(wins) == 4


def test_ties_share_the_win_and_are_counted() -> None:
    report = simulate("tsuro", ["random", "random", "random"], 30, seed=5)
    assert report.ties > 0  # random Tsuro players often leave the board together
    total = sum(row.wins for row in report.by_seat)
    assert total == pytest.approx(30 - report.unfinished)
    assert f"{report.ties} tied (a tie shares the win)" in report.header()
    # Shares of a win show as fractions, every row alike.
    assert all(len(row.split()[2].partition(".")[2]) == 1 for row in report.table().splitlines()[2:5])


def test_the_ladder_rates_every_robot_and_orders_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Robots drawn at random for each game, rated with OpenSkill: stronger robots rank higher."""
    out = tmp_path / "ladder.json"
    code = main(
        [
            "simulate",
            "--ladder",
            "apologies",
            "--seats",
            "a,b",
            "--games",
            "60",
            "--seed",
            "4",
            "--quiet",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert text.startswith("OpenSkill ladder of apologies (STANDARD mode): 60 games of 2 seats")
    rows = json.loads(out.read_text())["rows"]
    names = [row["robot"] for row in rows]
    assert sorted(names) == sorted(["random", "greedy", "easy", "search", "rollout"])
    assert sum(row["games"] for row in rows) == 120  # two seats a game
    assert names.index("random") == len(names) - 1  # the weakest comes last
    assert [row["ordinal"] for row in rows] == sorted((row["ordinal"] for row in rows), reverse=True)
    for name in names:
        assert name in text
