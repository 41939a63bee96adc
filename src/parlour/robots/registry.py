"""Robots by game and name. Each game's robots live in ``parlour.robots.<game>`` as ``ROBOTS``."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from parlour.games.base import Robot

__all__ = ["robot", "robots"]


def robots(game: str) -> dict[str, Robot[Any, Any]]:
    """Every robot of ``game`` by name."""
    found: dict[str, Robot[Any, Any]] = import_module(f"parlour.robots.{game}").ROBOTS
    return found


def robot(game: str, name: str) -> Robot[Any, Any]:
    """The robot called ``name`` for ``game``; KeyError names the choices."""
    choices = robots(game)
    try:
        return choices[name]
    except KeyError:
        raise KeyError(f"no robot {name!r} for {game}; choose from {', '.join(sorted(choices))}") from None
