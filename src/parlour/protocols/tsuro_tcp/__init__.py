"""The Tsuro protocol over TCP (tsuro-protocol.md, fish-tsuro-notes.md T1-T19)."""

from parlour.protocols.tsuro_tcp.service import TsuroService

__all__ = ["TsuroService"]
