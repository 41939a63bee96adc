"""The rules of moderation, pure: what a ban is at a time, what its refusal says,
who may act on whom, and the ids of audit records. The accounts and their bans are kept by the
/async hub (protocols/async_ws); the clock and the random source are passed in.
"""

from __future__ import annotations

import math
import secrets
from datetime import UTC, datetime
from typing import Final, NamedTuple

from parlour.accounts.tokens import TokenError
from parlour.storage.records import ADMIN_ROLE

__all__ = [
    "ADMIN",
    "MAX_REASON",
    "Ban",
    "Banned",
    "acting_on_admin",
    "audit_id",
    "ban_words",
    "utc",
]

#: The role of an operator's account (stored as ``AccountRow.role``).
ADMIN: Final = ADMIN_ROLE
#: The longest reason an admin may give (a ban's shows at every refused sign-in).
MAX_REASON: Final = 500


class Ban(NamedTuple):
    """Why an account is banned, and until when (None: for good)."""

    reason: str
    until: float | None

    def active(self, now: float) -> bool:
        """Whether it holds at ``now``: a ban that ends lifts itself then, with nothing to do."""
        return self.until is None or now < self.until


class Banned(TokenError):
    """A sign-in refused because the account is banned; the message says why and until when."""

    def __init__(self, ban: Ban) -> None:
        super().__init__(ban_words(ban))
        self.ban = ban


def utc(at: float) -> str:
    """A time as ISO 8601 UTC to the second (what a refused player is told)."""
    return datetime.fromtimestamp(math.floor(at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ban_words(ban: Ban) -> str:
    """What a banned player is told when a sign-in is refused: the reason and the end."""
    end = "for good" if ban.until is None else f"until {utc(ban.until)}"
    return f"this account is banned {end}: {ban.reason}"


def acting_on_admin(actor_id: int, target_id: int, target_role: str) -> str | None:
    """The rule for an admin acting on an account: why it is refused, or None.

    No admin may moderate another admin (mute, ban, force a password reset): an operator's
    account loses its powers only by ``parlour admin revoke``, run by whoever holds the store,
    and is moderated as any player once revoked. So one stolen admin token cannot lock the
    other operators out. An admin may act on its own account (players' own routes) but not
    moderate itself either: that is a mistake, not a need.
    """
    if actor_id == target_id:
        return "an admin does not moderate its own account"
    if target_role == ADMIN:
        return (
            "an admin's account is not moderated over HTTP: revoke its role first (parlour admin revoke NAME)"
        )
    return None


def audit_id(now: float) -> str:
    """A unique id for an audit record that sorts as the time does: microseconds in hex, then
    random bits (two records of one microsecond, on two nodes, still differ)."""
    return f"{max(0, math.floor(now * 1_000_000)):014x}-{secrets.token_hex(4)}"
