"""Apologies, a game like Sorry!: the rules engine behind the game-plugin interface."""

from __future__ import annotations

from parlour.games.apologies.engine import GameState
from parlour.games.apologies.plugin import PLUGIN, ApologiesPlugin

__all__ = ["PLUGIN", "ApologiesPlugin", "GameState"]
