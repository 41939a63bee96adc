"""The plain registry of game plugins, keyed by game name (python-chess's variant list is the model).

Plugins are imported lazily so that a server hosting one game does not load the others.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from parlour.games.base import GamePlugin

__all__ = ["GAMES", "plugin"]

#: game name -> "module:attribute" of its plugin object.
GAMES: dict[str, str] = {
    "apologies": "parlour.games.apologies:PLUGIN",
    "fish": "parlour.games.fish:PLUGIN",
    "tsuro": "parlour.games.tsuro:PLUGIN",
}


def plugin(name: str) -> GamePlugin[Any, Any, Any]:
    """The plugin registered as ``name``; KeyError names the known games."""
    try:
        target = GAMES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r}; known games: {', '.join(sorted(GAMES))}") from None
    module, _, attribute = target.partition(":")
    found: GamePlugin[Any, Any, Any] = getattr(import_module(module), attribute)
    return found
