"""The Fish player protocol over TCP (docs/fish-protocol.md)."""

from parlour.protocols.fish_tcp.service import FishService

__all__ = ["FishService"]
