"""Build hook: Parlour's hot modules are compiled to C extensions with mypyc.

The modules below are ordinary, strictly typed Python; mypyc turns them into extension modules
that run the same code two to three times faster (the rules engine, the robots, the lobby and
the Apologies renderer are where a busy server spends its time). Set ``PARLOUR_PURE=1`` when
installing to skip compilation and run everything as plain Python.
"""

from __future__ import annotations

import os

from setuptools import setup

#: Compiled modules. Everything else (transports, CLI, settings) stays Python.
COMPILED = [
    "src/parlour/core/effects.py",
    "src/parlour/core/events.py",
    "src/parlour/core/ids.py",
    "src/parlour/core/journal.py",
    "src/parlour/core/lobby.py",
    "src/parlour/core/records.py",
    "src/parlour/core/turns.py",
    "src/parlour/games/apologies/board.py",
    "src/parlour/games/apologies/engine.py",
    "src/parlour/games/apologies/model.py",
    "src/parlour/games/apologies/plugin.py",
    "src/parlour/protocols/apologies_ws/render.py",
    "src/parlour/protocols/apologies_ws/service.py",
    "src/parlour/robots/apologies/search.py",
    "src/parlour/robots/apologies/simple.py",
]


def extensions() -> list[object]:
    if os.environ.get("PARLOUR_PURE") == "1":
        return []
    from mypyc.build import mypycify

    return list(mypycify(COMPILED, opt_level="3", group_name="parlour_native"))


setup(ext_modules=extensions())
