"""Robot levels: ``easy``, ``normal`` and ``hard`` for every game, each one of the game's robots.

A player chooses a level wherever a robot seat is chosen; the server's robot settings stay the
default when no level is given. ``easy`` blunders on purpose: it plays a random legal move now and
then, and the greedy choice otherwise, so a beginner can win. The order (hard beats normal beats
easy) is measured in tests/robots/test_levels.py and in docs/robots.md.
"""

from __future__ import annotations

from typing import Any

from parlour.games.base import Robot
from parlour.robots.registry import robot

__all__ = ["LEVELS", "LEVEL_ROBOTS", "level_robot", "pick"]

LEVELS = ("easy", "normal", "hard")

#: game -> level -> robot name (in the game's ROBOTS).
LEVEL_ROBOTS: dict[str, dict[str, str]] = {
    "apologies": {"easy": "easy", "normal": "search", "hard": "rollout"},
    "fish": {"easy": "easy", "normal": "shallow", "hard": "alphabeta"},
    "tsuro": {"easy": "easy", "normal": "normal", "hard": "lookahead"},
}


def level_robot(game: str, level: str) -> Robot[Any, Any]:
    """The robot that plays ``game`` at ``level``; ValueError names the levels."""
    try:
        name = LEVEL_ROBOTS[game][level]
    except KeyError:
        raise ValueError(f"no level {level!r} for {game}; choose from {', '.join(LEVELS)}") from None
    return robot(game, name)


def pick(game: str, name: str) -> Robot[Any, Any]:
    """A robot by name or by level (the robot settings take either)."""
    if name in LEVELS:
        return level_robot(game, name)
    return robot(game, name)
