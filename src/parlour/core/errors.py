"""One exception tree for everything a request can run into, split by cause (DESIGN.md, Errors).

Each protocol adapter maps these classes to its own failure vocabulary at exactly one boundary.
The message of an exception is safe to show to the client; it never holds a secret.
"""

from __future__ import annotations

__all__ = [
    "AdvertiserMayNotQuit",
    "AlreadyPlaying",
    "ConnectionLimit",
    "DuplicateHandle",
    "GameLimit",
    "IllegalMove",
    "InternalError",
    "LifecycleError",
    "LimitReached",
    "MalformedRequest",
    "NoMovePending",
    "NotAdvertiser",
    "NotPlaying",
    "ParlourError",
    "PlayerLimit",
    "RateLimited",
    "RuleViolation",
    "StoreUnavailable",
    "UnknownGame",
    "UnknownPlayer",
]


class ParlourError(Exception):
    """Base of every failure a request can meet. ``str(error)`` is the client-facing comment,
    or empty when the protocol's default wording should be used."""

    def __init__(self, comment: str = "", handle: str | None = None) -> None:
        super().__init__(comment)
        self.comment = comment
        #: The handle to report with the failure, when there is one to report.
        self.handle = handle


class MalformedRequest(ParlourError):
    """The request cannot be understood: bad JSON, wrong types, missing or unknown fields."""


class RuleViolation(ParlourError):
    """Understood, but not allowed by the lobby or the game's rules."""


class UnknownPlayer(RuleViolation):
    pass


class UnknownGame(RuleViolation):
    pass


class DuplicateHandle(RuleViolation):
    pass


class NotAdvertiser(RuleViolation):
    pass


class AdvertiserMayNotQuit(RuleViolation):
    pass


class IllegalMove(RuleViolation):
    pass


class LifecycleError(ParlourError):
    """Not allowed in the current state of the player or the game."""


class NotPlaying(LifecycleError):
    pass


class AlreadyPlaying(LifecycleError):
    pass


class NoMovePending(LifecycleError):
    pass


class LimitReached(ParlourError):
    """A configured capacity limit would be exceeded."""


class ConnectionLimit(LimitReached):
    pass


class PlayerLimit(LimitReached):
    pass


class GameLimit(LimitReached):
    pass


class RateLimited(LimitReached):
    """A connection sent more requests than its rate allows (the connection is closed)."""


class InternalError(ParlourError):
    """A fault of the server itself; logged with detail, reported without it."""


class StoreUnavailable(InternalError):
    """The change could not be stored, so it did not happen; the client may try again."""

    def __init__(self, comment: str = "The server could not save this change; try again later") -> None:
        super().__init__(comment)
