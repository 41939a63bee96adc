"""What one client may cost the server, whichever protocol it speaks.

- ``outbox_bytes``: messages waiting for a client that does not read; past it the connection is
  closed (websocket 1008, TCP closed) and its player leaves as on a disconnect.
- ``handshake_timeout``: an HTTP request (a websocket upgrade included) must arrive whole within
  this many seconds of the connection (or of its first byte on a kept-alive one).
- per address: open connections (``connections_per_address``) and requests a second across all
  of its connections (``address_requests_per_second``, bursts of twice that), on every port.
  The per-connection request rates are the services' own (they answer in their protocols' words).

Addresses in ``exempt`` (loopback by default: local tools, tests, benchmarks and a reverse proxy
on the same host) are not counted per address. Behind a proxy every client has the proxy's
address, so per-address limits belong to the proxy there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from parlour.core.ratelimit import TokenBucket
from parlour.settings import Settings

__all__ = ["AddressLimits", "ConnectionLimits"]

#: How many idle address buckets may pile up before the full ones are forgotten.
_PRUNE_AT = 4096


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    outbox_bytes: int = 1 << 20
    handshake_timeout: float = 10.0
    address_requests_per_second: float = 500.0
    connections_per_address: int = 100
    exempt: frozenset[str] = field(default_factory=lambda: frozenset({"127.0.0.1", "::1"}))

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        return cls(
            outbox_bytes=settings.max_outbox_bytes,
            handshake_timeout=settings.handshake_timeout,
            address_requests_per_second=settings.address_requests_per_second,
            connections_per_address=settings.max_connections_per_address,
            exempt=frozenset(settings.exempt_addresses_list()),
        )


class AddressLimits:
    """Open connections and request buckets per client address, for every listener at once."""

    def __init__(self, limits: ConnectionLimits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self.clock = clock
        self.open: dict[str, int] = {}
        self._buckets: dict[str, TokenBucket] = {}

    def limited(self, address: str) -> bool:
        """Whether this address is counted at all (not exempt, and known)."""
        return bool(address) and address not in self.limits.exempt

    def connect(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) past the cap."""
        if not self.limited(address):
            return True
        count = self.open.get(address, 0)
        if count >= self.limits.connections_per_address:
            return False
        self.open[address] = count + 1
        return True

    def disconnect(self, address: str) -> None:
        count = self.open.get(address, 0)
        if count > 1:
            self.open[address] = count - 1
        else:
            self.open.pop(address, None)

    def allow(self, address: str) -> bool:
        """Take one request from the address's bucket (always True for an exempt address)."""
        if not self.limited(address):
            return True
        now = self.clock()
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= _PRUNE_AT:
                self._prune(now)
            bucket = self._buckets[address] = TokenBucket.full(self.limits.address_requests_per_second, now)
        return bucket.allow(now)

    def _prune(self, now: float) -> None:
        for address, bucket in list(self._buckets.items()):
            if bucket.idle(now):
                del self._buckets[address]
