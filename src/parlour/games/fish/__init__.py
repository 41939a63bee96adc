"""Hey, That's My Fish!: the rules plugin."""

from parlour.games.fish.rules import FishPlugin, FishState, Move, Place

__all__ = ["PLUGIN", "FishPlugin", "FishState", "Move", "Place"]

PLUGIN = FishPlugin()
