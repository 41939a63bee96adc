"""Apologies robots by name, for programmatic seats, OPTIMAL_MOVE and ``parlour simulate``."""

from __future__ import annotations

from parlour.games.apologies.engine import GameState
from parlour.games.apologies.model import Move
from parlour.games.base import Robot
from parlour.robots.apologies.search import SearchRobot
from parlour.robots.apologies.simple import GreedyRobot, RandomRobot, player_score, reward

__all__ = ["ROBOTS", "GreedyRobot", "RandomRobot", "SearchRobot", "player_score", "reward"]

ROBOTS: dict[str, Robot[GameState, Move]] = {
    "random": RandomRobot(),
    "greedy": GreedyRobot(),
    "search": SearchRobot(),
}
