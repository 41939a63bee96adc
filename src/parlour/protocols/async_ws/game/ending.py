"""How a game ends (the Scalable Server text "Abort" and "Game over"; S11): the outcome and its
ratings, or the abort and its penalties, each seat's result for the players' profiles, and what
everyone is told. The game enters ABORTING or OUTCOME, and later ABORTED or OVER once every human
confirmed (machine.Game.close); this helper reads the record and changes it only through the game
(:class:`EndingGame`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from parlour.protocols.async_ws.game.host import GameHost, SeatRating
from parlour.protocols.async_ws.game.model import AsyncGame
from parlour.protocols.async_ws.game.outbound import Outbound
from parlour.protocols.async_ws.wire.messages import (
    GameAbortedRequest,
    GameOutcomeRequest,
    OutcomeEntry,
    Penalty,
)
from parlour.storage import GameResultRow

__all__ = ["Ending", "EndingGame"]


class EndingGame(Protocol):
    """What the end asks of its game (machine.Game): the changes it makes."""

    def enter_outcome(self, outcome: list[OutcomeEntry], ranked: bool, now: float) -> None: ...

    def enter_aborting(self, penalties: list[Penalty], now: float) -> None: ...

    def close(self, now: float) -> None: ...

    def save(self, now: float) -> None: ...


class Ending:
    """The end of one game, made by the game."""

    __slots__ = ("_game", "_host", "_out", "_record")

    def __init__(self, game: EndingGame, record: AsyncGame, out: Outbound, host: GameHost) -> None:
        self._game = game
        self._record = record
        self._out = out
        self._host = host

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
            changes = self._host.penalise(game.config.game_type, players, now)
            rated = dict(zip(losers, changes, strict=True))
            penalties = [
                Penalty(player_id=local, rating_change=change.change, shown=change.shown)
                for local, change in rated.items()
                if change is not None
            ]
        if game.status == "RUNNING":  # a game that was played: its seats' results (no ranks)
            self._results(None, rated, now)
        self._game.enter_aborting(penalties, now)
        self._out.to_game(GameAbortedRequest(game_id=game.id, penalties=penalties))
        if not any(not seat.robot for seat in game.seats):
            self._game.close(now)

    def finish(self, scores: dict[int, tuple[float, int]], ranked: bool, now: float) -> None:
        """OUTCOME: the results are shown and wait for every human's confirmation (S11)."""
        game = self._record
        changes: Sequence[SeatRating | None] = [None] * len(game.seats)
        if ranked:
            changes = self._host.rate(
                game.config.game_type,
                [seat.player_id for seat in game.seats],
                [scores[seat.local_id][1] for seat in game.seats],
                now,
            )
        outcome = [
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
        self._game.enter_outcome(outcome, ranked, now)
        self._out.to_game(GameOutcomeRequest(game_id=game.id, outcome=outcome, is_ranked=ranked))
        self._out.notify_over(now)
        if not any(not seat.robot for seat in game.seats):
            self._game.close(now)
        else:
            self._game.save(now)

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
        self._host.ended(rows)
