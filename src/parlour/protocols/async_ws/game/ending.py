"""How a game ends (scalable-server-protocol.rst "Abort" and "Game over"; S11): ABORTING or
OUTCOME until every human confirmed, then ABORTED or OVER."""

from __future__ import annotations

from parlour.protocols.async_ws.game.base import GameBase
from parlour.protocols.async_ws.messages import GameAbortedRequest, GameOutcomeRequest, OutcomeEntry, Penalty

__all__ = ["Ending"]


class Ending(GameBase):
    __slots__ = ()

    def abort(self, now: float) -> None:
        """No active player is left: ABORTING until everyone confirmed (the text's "Abort"). A
        ranked game penalises its forfeiters and players out of time."""
        game = self._record
        penalties: list[Penalty] = []
        if game.status == "RUNNING" and (game.config.ranked or game.is_ranked):
            losers = [
                seat.local_id
                for seat in game.seats
                if not seat.robot and seat.state in ("FORFEITED", "TIMED_OUT")
            ]
            players = [game.seats[local - 1].player_id for local in losers]
            changes = self.host.penalise(game.config.game_type, players, now)
            penalties = [
                Penalty(player_id=local, rating_change=change)
                for local, change in zip(losers, changes, strict=True)
                if change is not None
            ]
        game.status = "ABORTING"
        game.finished = now
        game.turn = game.delegate = game.delegation = None
        game.end_phase()
        game.penalties = penalties
        self.to_game(GameAbortedRequest(game_id=game.id, penalties=penalties))
        if not any(not seat.robot for seat in game.seats):
            self.close(now)

    def finish(self, scores: dict[int, tuple[float, int]], ranked: bool, now: float) -> None:
        """OUTCOME: the results are shown and wait for every human's confirmation (S11)."""
        game = self._record
        changes: list[float | None] = [None] * len(game.seats)
        if ranked:
            changes = self.host.rate(
                game.config.game_type,
                [seat.player_id for seat in game.seats],
                [scores[seat.local_id][1] for seat in game.seats],
                now,
            )
        game.outcome = [
            OutcomeEntry(
                player_id=seat.local_id,
                score=scores[seat.local_id][0],
                rank=scores[seat.local_id][1],
                rating_change=change,
            )
            for seat, change in zip(game.seats, changes, strict=True)
        ]
        game.is_ranked = ranked
        game.status = "OUTCOME"
        game.finished = now
        game.turn = game.delegate = game.delegation = None
        game.end_phase()
        self.to_game(GameOutcomeRequest(game_id=game.id, outcome=game.outcome, is_ranked=ranked))
        self.notify_over(now)
        if not any(not seat.robot for seat in game.seats):
            self.close(now)
        else:
            self.save(now)

    def close(self, now: float) -> None:
        """OUTCOME -> OVER, ABORTING -> ABORTED: the game leaves every player's live games (the
        registry reads its status after the input)."""
        game = self._record
        game.status = "OVER" if game.status == "OUTCOME" else "ABORTED"
        if game.finished is None:
            game.finished = now
        self.rules = None
        self.context.roster.track(game)
        self.save(now)
