"""A service that does nothing, for the transport's tests to override only the hooks they use."""

from __future__ import annotations

from parlour.core.effects import ConnId, Effect

__all__ = ["Idle"]


class Idle:
    """Every hook of a websocket or line service, answering nothing."""

    def connected(self, conn: ConnId, now: float) -> list[Effect]:
        return []

    def received(self, conn: ConnId, data: str | bytes, now: float) -> list[Effect]:
        return []

    def disconnected(self, conn: ConnId, now: float) -> list[Effect]:
        return []

    def tick(self, now: float) -> list[Effect]:
        return []

    def shutdown(self, now: float) -> list[Effect]:
        return []

    def stats(self) -> dict[str, int]:
        return {"connections": 0}
