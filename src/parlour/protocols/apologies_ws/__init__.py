"""The Apologies websocket protocol (docs/apologies-protocol.md)."""

from parlour.protocols.apologies_ws.service import ROBOT_HANDLES, ApologiesService

__all__ = ["ROBOT_HANDLES", "ApologiesService"]
