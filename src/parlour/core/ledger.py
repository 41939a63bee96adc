"""One count of the games in progress across every service of a server, against one limit.

The Apologies lobby counts advertised and running games; Fish and Tsuro count their tables from
the moment they open. All of them share the ``max_in_progress_games`` setting through this ledger.
"""

from __future__ import annotations

__all__ = ["Ledger"]


class Ledger:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_progress = 0

    def has_room(self) -> bool:
        """True when one more game may open."""
        return self.in_progress < self.limit

    def opened(self) -> None:
        self.in_progress += 1

    def closed(self) -> None:
        self.in_progress -= 1
