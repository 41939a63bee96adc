"""Fish robots: the searching robot beats random play in at least 80% of 2-player games."""

from __future__ import annotations

from parlour.simulate import simulate


def test_search_beats_random_in_two_player_games() -> None:
    report = simulate("fish", ["search", "random"], 40, seed=2, options={"holes": 2})
    assert report.by_seat[0].win_rate >= 0.8, report.table()
