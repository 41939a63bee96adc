"""Apologies robots by name, for programmatic seats, OPTIMAL_MOVE and ``parlour simulate``."""

from __future__ import annotations

from parlour.games.apologies.engine import GameState
from parlour.games.apologies.model import Move
from parlour.games.base import Robot
from parlour.robots.apologies.rollout import RolloutRobot
from parlour.robots.apologies.search import SearchRobot
from parlour.robots.apologies.simple import GreedyRobot, RandomRobot, player_score, reward
from parlour.robots.blunder import Blunderer

__all__ = ["ROBOTS", "GreedyRobot", "RandomRobot", "RolloutRobot", "SearchRobot", "player_score", "reward"]

ROBOTS: dict[str, Robot[GameState, Move]] = {
    "random": RandomRobot(),
    "greedy": GreedyRobot(),
    "easy": Blunderer(GreedyRobot(), 0.3),
    "search": SearchRobot(),
    "rollout": RolloutRobot(),
}
