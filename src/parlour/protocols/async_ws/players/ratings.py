"""Ratings per game type (docs/async-decisions.md S11), with OpenSkill's Plackett-Luce model.

A ranked game rates every human seat from the final ranks; robot seats take part with the
model's default rating and are never stored. An aborted ranked game penalises its forfeiters and
timed-out players as a last place against that default. What players see is the change of the
ordinal (mu - 3 sigma), the conservative skill estimate, and the rating on the familiar scale
of parlour.core.rating_scale with its change (``shown``), which is what people read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from openskill.models import PlackettLuce, PlackettLuceRating

from parlour.core.rating_scale import shown_change, shown_rating
from parlour.protocols.async_ws.game.host import SeatRating
from parlour.protocols.async_ws.state.hub import Hub
from parlour.protocols.async_ws.state.known_accounts import Account
from parlour.protocols.async_ws.wire.messages import Player, Presence, ShownRating
from parlour.storage import RatingRow

__all__ = ["ordinal", "penalise", "player", "rate", "shown"]

_MODEL: Final = PlackettLuce()


def _rating(hub: Hub, player_id: int | None, game_type: str) -> PlackettLuceRating:
    account = hub.accounts.get(player_id) if player_id is not None else None
    if account is not None and game_type in account.ratings:
        mu, sigma, _ = account.ratings[game_type]
        return _MODEL.rating(mu=mu, sigma=sigma)
    return _MODEL.rating()


def ordinal(mu: float, sigma: float) -> float:
    return mu - 3 * sigma


def shown(mu: float, games: int, change: int | None = None) -> ShownRating:
    """A rating as the wire shows it to people (parlour.core.rating_scale)."""
    seen = shown_rating(mu, games)
    return ShownRating(rating=seen.rating, provisional=seen.provisional, change=change)


def player(account: Account, presence: Presence) -> Player:
    """The full player (S11): its ordinal and its shown rating per game type."""
    rated = account.ratings.items()
    return Player(
        player_id=account.id,
        name=account.name,
        presence=presence,
        ratings={game_type: round(ordinal(mu, sigma), 3) for game_type, (mu, sigma, _) in rated},
        games_played=sum(games for _, _, games in account.ratings.values()),
        shown_ratings={game_type: shown(mu, games) for game_type, (mu, _, games) in rated},
    )


def _update(
    hub: Hub,
    game_type: str,
    players: Sequence[int | None],
    before: list[PlackettLuceRating],
    after: list[PlackettLuceRating],
    now: float,
) -> tuple[list[RatingRow], list[SeatRating | None]]:
    rows: list[RatingRow] = []
    changes: list[SeatRating | None] = []
    for player_id, old, new in zip(players, before, after, strict=True):
        account = hub.accounts.get(player_id) if player_id is not None else None
        if account is None:
            changes.append(None)
            continue
        games = account.ratings.get(game_type, (0.0, 0.0, 0))[2] + 1
        row = RatingRow(
            account_id=account.id,
            game_type=game_type,
            mu=new.mu,
            sigma=new.sigma,
            games=games,
            updated=now,
            ordinal=ordinal(new.mu, new.sigma),
        )
        hub.accounts.rate(row)
        rows.append(row)
        changes.append(
            SeatRating(
                change=round(ordinal(new.mu, new.sigma) - ordinal(old.mu, old.sigma), 3),
                shown=shown(new.mu, games, shown_change(old.mu, new.mu)),
                mu=new.mu,
                sigma=new.sigma,
                games=games,
            )
        )
    return rows, changes


def rate(
    hub: Hub, game_type: str, players: Sequence[int | None], ranks: Sequence[int], now: float
) -> tuple[list[RatingRow], list[SeatRating | None]]:
    """New ratings from the final ranks of a game's seats (their accounts, None for a robot, in
    seat order) and each seat's change."""
    before = [_rating(hub, player_id, game_type) for player_id in players]
    teams = _MODEL.rate([[rating] for rating in before], ranks=[float(rank) for rank in ranks])
    return _update(hub, game_type, players, before, [team[0] for team in teams], now)


def penalise(
    hub: Hub, game_type: str, players: Sequence[int | None], now: float
) -> tuple[list[RatingRow], list[SeatRating | None]]:
    """Each of these accounts loses a game against the default rating."""
    before = [_rating(hub, player_id, game_type) for player_id in players]
    after = [_MODEL.rate([[old], [_MODEL.rating()]], ranks=[2.0, 1.0])[0][0] for old in before]
    return _update(hub, game_type, players, before, after, now)
