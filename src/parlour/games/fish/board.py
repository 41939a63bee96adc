"""The Fish board: hexagonal tiles in rows and columns, ids column-major.

A tile id is ``x * rows + y`` for column x and row y; odd rows are drawn half a tile to the right.
Neighbours lie in six directions (no east or west); a hole is a tile with no fish left.
"""

from __future__ import annotations

from random import Random

__all__ = ["DIRECTIONS", "neighbour", "neighbours_table", "random_fish", "uniform_fish"]

#: The six directions, clockwise from north: (name, dx for even row, dx for odd row, dy).
DIRECTIONS = (
    ("north", 0, 0, -2),
    ("northeast", 0, 1, -1),
    ("southeast", 0, 1, 1),
    ("south", 0, 0, 2),
    ("southwest", -1, 0, 1),
    ("northwest", -1, 0, -1),
)


def neighbour(rows: int, columns: int, tile: int, direction: int) -> int:
    """The tile next to ``tile`` in ``direction`` (index into DIRECTIONS), or -1 off the board."""
    x, y = divmod(tile, rows)
    _, even_dx, odd_dx, dy = DIRECTIONS[direction]
    nx, ny = x + (odd_dx if y % 2 else even_dx), y + dy
    if 0 <= nx < columns and 0 <= ny < rows:
        return nx * rows + ny
    return -1


def neighbours_table(rows: int, columns: int) -> tuple[tuple[int, ...], ...]:
    """NEIGHBOURS[tile][direction] for every tile of a board (precomputed: moves walk it a lot)."""
    return tuple(tuple(neighbour(rows, columns, t, d) for d in range(6)) for t in range(rows * columns))


def uniform_fish(rows: int, columns: int, fish: int) -> list[int]:
    """A board with ``fish`` on every tile and no holes (reproducible test boards)."""
    return [fish] * (rows * columns)


def random_fish(rows: int, columns: int, holes: int, needed: int, rng: Random) -> list[int]:
    """1-5 fish per tile and ``holes`` holes, keeping at least ``needed`` tiles for the penguins."""
    tiles = rows * columns
    if tiles - holes < needed:
        raise ValueError(
            f"a {rows}x{columns} board with {holes} holes has room for fewer than {needed} penguins"
        )
    fish = [rng.randint(1, 5) for _ in range(tiles)]
    for tile in rng.sample(range(tiles), holes):
        fish[tile] = 0
    return fish
