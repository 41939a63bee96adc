"""The limits and timers of /async (docs/async-decisions.md S5, S8, S11), from the settings."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AsyncLimits"]


@dataclass(frozen=True, slots=True)
class AsyncLimits:
    """The limits of S8 and the timers of S5/S11, from the settings."""

    ping_timeout: float = 60.0
    max_offers: int = 3
    max_games: int = 50
    max_state_bytes: int = 256 * 1024
    max_pause: int = 10
    requests_per_second: float = 50.0
    list_interval: float = 2.0
    #: The entries of each lobby list pushed to a client that takes no deltas, past which it is
    #: capped (those who have waited longest, plus at most as many of the client's buddies; the
    #: oldest open games); 0: no cap.
    list_cap: int = 100
    outcome_retention: float = 7 * 86400.0
    #: How long a game stays in memory once OVER or ABORTED (it stays in the store): status
    #: reports still name it meanwhile. Without this every game ever played stayed in memory
    #: (bench/soak.py: about 19 KB per game). A restart loads none of them either.
    finished_retention: float = 2 * 86400.0
    #: A frame may carry a state and a summary of max_state_bytes each, JSON-escaped.
    max_frame_bytes: int = 768 * 1024
