"""The Tsuro protocol over TCP (docs/tsuro-protocol.md)."""

from parlour.protocols.tsuro_tcp.service import TsuroService

__all__ = ["TsuroService"]
