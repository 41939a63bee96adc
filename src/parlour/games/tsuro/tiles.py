"""Tsuro tiles and ports (docs/tsuro-protocol.md, "The 35 tiles"): the tiles, clockwise rotations,
sides.

Ports are 0..7 for A..H, clockwise from the top-left: A, B on the top side, C, D on the right,
E, F on the bottom, G, H on the left. Turning a tile 90 degrees clockwise adds 2 to each port.
"""

from __future__ import annotations

__all__ = ["MATCH", "PORTS", "SIDE_STEP", "TILES", "exit_port", "port_side"]

PORTS = "ABCDEFGH"
#: The port a path enters on the neighbouring square: A-F, B-E, C-H, D-G.
MATCH = (5, 4, 7, 6, 1, 0, 3, 2)
#: (dx, dy) of the square a port leads to: top, right, bottom, left.
SIDE_STEP = ((0, -1), (1, 0), (0, 1), (-1, 0))

_CONNECTIONS = """
AE BF CH DG|AE BF CG DH|AF BE CH DG|AE BD CG FH|AH BC DE FG|AE BC DH FG|AE BC DG FH|AD BG CF EH|AD BF CG EH
AD BE CH FG|AD BE CG FH|AD BC EH FG|AC BH DF EG|AC BH DE FG|AC BG DF EH|AC BG DE FH|AC BF DH EG|AC BF DG EH
AC BE DH FG|AC BE DG FH|AC BD EH FG|AC BD EG FH|AB CH DG EF|AB CH DF EG|AB CH DE FG|AB CG DH EF|AB CG DF EH
AB CG DE FH|AB CF DH EG|AB CF DG EH|AB CE DH FG|AB CE DG FH|AB CD EH FG|AB CD EG FH|AB CD EF GH
"""


def _tile(spec: str) -> tuple[int, ...]:
    """A tile at rotation 0 as a port -> port table."""
    other = [0] * 8
    for pair in spec.split():
        a, b = PORTS.index(pair[0]), PORTS.index(pair[1])
        other[a], other[b] = b, a
    return tuple(other)


#: TILES[index][port] = the port the path from ``port`` leads to, at rotation 0.
TILES = tuple(_tile(spec) for spec in _CONNECTIONS.replace("\n", "|").split("|") if spec.strip())


def exit_port(index: int, rotation: int, entry: int) -> int:
    """Where a path entering a tile at ``entry`` leaves it, the tile turned ``rotation`` degrees."""
    turn = 2 * (rotation // 90)
    return (TILES[index][(entry - turn) % 8] + turn) % 8


def port_side(port: int) -> int:
    """0 top, 1 right, 2 bottom, 3 left."""
    return port // 2
