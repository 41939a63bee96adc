"""Request rates: one token bucket, used by every protocol's limits (pure: ``now`` is passed in).

A bucket holds up to ``burst`` tokens and gains ``rate`` a second; each request takes one. A
client may send a burst of requests at once, then ``rate`` a second for ever, and no more.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TokenBucket"]


@dataclass(slots=True)
class TokenBucket:
    rate: float
    burst: float
    tokens: float
    checked: float

    @classmethod
    def full(cls, rate: float, now: float, burst: float | None = None) -> TokenBucket:
        """A bucket with its whole burst available; the burst is twice the rate by default."""
        size = 2 * rate if burst is None else burst
        return cls(rate, size, size, now)

    def allow(self, now: float) -> bool:
        """Take a token if there is one (True), or refuse the request (False)."""
        tokens = self.tokens + (now - self.checked) * self.rate
        self.tokens = tokens if tokens < self.burst else self.burst
        self.checked = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def idle(self, now: float) -> bool:
        """Full again: forgetting the bucket changes nothing (a new one starts full)."""
        return self.tokens + (now - self.checked) * self.rate >= self.burst
