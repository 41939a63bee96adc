"""Parlour: one server for online turn-based board games.

Layers (imports flow downward only, see docs/DESIGN.md):
``cli`` -> ``transport`` -> ``protocols`` -> ``core`` -> ``robots`` -> ``games``.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
