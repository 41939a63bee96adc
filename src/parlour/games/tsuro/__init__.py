"""Tsuro: the rules plugin."""

from parlour.games.tsuro.rules import Placement, TsuroPlugin, TsuroState

__all__ = ["PLUGIN", "Placement", "TsuroPlugin", "TsuroState"]

PLUGIN = TsuroPlugin()
