"""The Apologies websocket protocol (apologies-event-model.rst, apologies-wire-notes.md)."""

from parlour.protocols.apologies_ws.service import ROBOT_HANDLES, ApologiesService

__all__ = ["ROBOT_HANDLES", "ApologiesService"]
