"""Failed-login rate limits (docs/async-decisions.md S4), per account name and per address.

A name or an address that failed ``per_name`` / ``per_address`` times within the last
``window`` seconds must wait until the oldest of those failures leaves the window. A
successful login clears its name's failures, not its address's (else one account of an
attacker's own would reset the address's count between guesses at others'). A limit of 0
turns that check off.

Memory is bounded: each key keeps at most its limit of failure times, keys whose last failure
left the window are dropped as time goes by, and past ``max_keys`` keys of a kind the ones
that failed longest ago go first. IPv6 addresses count per /64 network (what one subscriber
usually gets), so an attacker cannot walk through its own addresses.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict, deque

__all__ = ["LoginLimiter"]


def address_key(address: str) -> str:
    """The key an address counts under: an IPv6 address's /64, an IPv4 address (mapped into
    IPv6 or not) itself, anything else as it is."""
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


class _Failures:
    """Recent failure times per key, the key that failed longest ago first."""

    __slots__ = ("keys", "limit", "max_keys", "window")

    def __init__(self, limit: int, window: float, max_keys: int) -> None:
        self.limit = limit
        self.window = window
        self.max_keys = max_keys
        self.keys: OrderedDict[str, deque[float]] = OrderedDict()

    def wait(self, key: str, now: float) -> float:
        times = self.keys.get(key)
        if not self.limit or times is None or len(times) < self.limit:
            return 0.0
        # The oldest of the last ``limit`` failures: once it leaves the window, one more try.
        return max(0.0, times[0] + self.window - now)

    def add(self, key: str, now: float) -> None:
        if not self.limit:
            return
        self._expire(now)
        times = self.keys.pop(key, None)
        if times is None:
            times = deque(maxlen=self.limit)
        times.append(now)
        self.keys[key] = times  # last failed: to the end
        while len(self.keys) > self.max_keys:
            self.keys.popitem(last=False)

    def clear(self, key: str) -> None:
        self.keys.pop(key, None)

    def _expire(self, now: float) -> None:
        """Drop the keys whose last failure left the window (they are at the front)."""
        keys = self.keys
        while keys:
            key, times = next(iter(keys.items()))
            if times[-1] + self.window > now:
                break
            del keys[key]


class LoginLimiter:
    """Counts failed logins per name (case-insensitively) and per address; see the module."""

    def __init__(
        self, per_name: int = 5, per_address: int = 20, window: float = 900.0, max_keys: int = 100_000
    ) -> None:
        if per_name < 0 or per_address < 0:
            raise ValueError("login limits must not be negative")
        if not window > 0:
            raise ValueError(f"the login window must be positive, not {window}")
        if max_keys < 1:
            raise ValueError("the limiter must track at least one key")
        self.window = window
        self._names = _Failures(per_name, window, max_keys)
        self._addresses = _Failures(per_address, window, max_keys)

    def check(self, name: str, address: str, now: float) -> float:
        """0 when a login of ``name`` from ``address`` may be tried now, else the seconds to wait."""
        return max(
            self._names.wait(name.casefold(), now),
            self._addresses.wait(address_key(address), now),
        )

    def failed(self, name: str, address: str, now: float) -> None:
        self._names.add(name.casefold(), now)
        self._addresses.add(address_key(address), now)

    def succeeded(self, name: str, address: str, now: float) -> None:
        self._names.clear(name.casefold())

    def tracked(self) -> tuple[int, int]:
        """How many names and addresses have failures on record (for tests and statistics)."""
        return len(self._names.keys), len(self._addresses.keys)
