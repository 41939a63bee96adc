"""Game rules plugins, pure and deterministic given an injected random source."""

from parlour.games.base import GamePlugin, Outcome, Robot, Seat

__all__ = ["GamePlugin", "Outcome", "Robot", "Seat"]
