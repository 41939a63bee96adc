"""Finished /async games leave memory after ``finished_retention`` (the store keeps them)."""

from __future__ import annotations

from parlour.protocols.async_ws.state.hub import AsyncLimits
from tests.protocols.async_ws.harness import Harness


def test_a_finished_game_is_forgotten_after_the_retention_and_stays_stored() -> None:
    h = Harness(AsyncLimits(outcome_retention=100, finished_retention=300))
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    game_id = h.open_game(ann, bob)
    other = h.open_game(ann, bob)  # still running throughout
    h.send(ann, type="GameOverRequest", game_id=game_id, finalScores={"1": [1, 1], "2": [0, 2]})
    h.send(ann, type="GameOutcomeConfirmationRequest", game_id=game_id)
    h.send(bob, type="GameOutcomeConfirmationRequest", game_id=game_id)
    assert h.games[game_id].status == "OVER"
    h.advance(299)
    hub = h.service.hub
    assert hub.games[game_id].status == "OVER"  # reports still name it meanwhile
    h.clear(bob)
    h.send(bob, type="WhatsNewPussycatRequest", game_id=game_id)
    assert h.expect(bob, "GameStatusReportRequest")["status_reports"][0]["status"] == "OVER"
    h.advance(1)
    assert game_id not in hub.games and h.service.games.game(game_id) is None and game_id not in hub.observers
    assert h.games[game_id].status == "OVER"  # the store's row is untouched
    assert hub.games[other].status == "RUNNING"
    h.advance(10_000)
    assert hub.games[other].status == "RUNNING"  # live games are never forgotten
