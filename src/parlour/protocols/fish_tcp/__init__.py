"""The Fish player protocol over TCP (fish-player-protocol.md, fish-tsuro-notes.md F1-F17)."""

from parlour.protocols.fish_tcp.service import FishService

__all__ = ["FishService"]
