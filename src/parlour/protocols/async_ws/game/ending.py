"""How a game ends (the Scalable Server text "Abort" and "Game over"; S11): ABORTING or
OUTCOME until every human confirmed, then ABORTED or OVER."""

from __future__ import annotations

from collections.abc import Sequence

from parlour.protocols.async_ws.game.base import GameBase
from parlour.protocols.async_ws.game.host import SeatRating
from parlour.protocols.async_ws.wire.messages import (
    GameAbortedRequest,
    GameOutcomeRequest,
    OutcomeEntry,
    Penalty,
)
from parlour.storage import GameResultRow

__all__ = ["Ending"]


class Ending(GameBase):
    __slots__ = ()

    def abort(self, now: float) -> None:
        """No active player is left: ABORTING until everyone confirmed (the text's "Abort"). A
        ranked game penalises its forfeiters and players out of time."""
        game = self._record
        penalties: list[Penalty] = []
        rated: dict[int, SeatRating | None] = {}
        if game.status == "RUNNING" and (game.config.ranked or game.is_ranked):
            losers = [
                seat.local_id
                for seat in game.seats
                if not seat.robot and seat.state in ("FORFEITED", "TIMED_OUT")
            ]
            players = [game.seats[local - 1].player_id for local in losers]
            changes = self.host.penalise(game.config.game_type, players, now)
            rated = dict(zip(losers, changes, strict=True))
            penalties = [
                Penalty(player_id=local, rating_change=change.change, shown=change.shown)
                for local, change in rated.items()
                if change is not None
            ]
        if game.status == "RUNNING":  # a game that was played: its seats' results (no ranks)
            self._results(None, rated, now)
        game.enter("ABORTING")
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
        changes: Sequence[SeatRating | None] = [None] * len(game.seats)
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
                rating_change=None if change is None else change.change,
                shown=None if change is None else change.shown,
            )
            for seat, change in zip(game.seats, changes, strict=True)
        ]
        self._results(
            scores, {seat.local_id: change for seat, change in zip(game.seats, changes, strict=True)}, now
        )
        game.is_ranked = ranked
        game.enter("OUTCOME")
        game.finished = now
        game.turn = game.delegate = game.delegation = None
        game.end_phase()
        self.to_game(GameOutcomeRequest(game_id=game.id, outcome=game.outcome, is_ranked=ranked))
        self.notify_over(now)
        if not any(not seat.robot for seat in game.seats):
            self.close(now)
        else:
            self.save(now)

    def _results(
        self, scores: dict[int, tuple[float, int]] | None, rated: dict[int, SeatRating | None], now: float
    ) -> None:
        """Each seat's result, for the players' profiles: its rank and score (None when the game
        was aborted), and its rating after the game when the game changed it."""
        game = self._record
        rows: list[GameResultRow] = []
        for seat in game.seats:
            score = None if scores is None else scores[seat.local_id]
            change = rated.get(seat.local_id)
            rows.append(
                GameResultRow(
                    game_id=game.id,
                    seat=seat.local_id,
                    game_type=game.config.game_type,
                    at=now,
                    account_id=seat.player_id,
                    name=seat.name,
                    rank=None if score is None else score[1],
                    score=None if score is None else score[0],
                    mu=None if change is None else change.mu,
                    sigma=None if change is None else change.sigma,
                    games=None if change is None else change.games,
                    change=None if change is None else change.change,
                )
            )
        self.host.ended(rows)

    def close(self, now: float) -> None:
        """OUTCOME -> OVER, ABORTING -> ABORTED: the game leaves every player's live games (the
        registry reads its status after the input)."""
        game = self._record
        game.enter("OVER" if game.status == "OUTCOME" else "ABORTED")
        if game.finished is None:
            game.finished = now
        self.rules = None
        self.context.roster.track(game)
        self.save(now)
