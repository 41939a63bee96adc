"""What a chaos run records: every request a client sent and every message it received, each
with its time, and every fault the nemesis injected. The checker reads nothing else (besides
the store at the end): a history written to ``history.jsonl`` can be checked again later
(``python -m tests.chaos.checker FOLDER``)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Event", "History", "trim"]

#: Fields of a received message kept in the history (the rest, a game's view and its legal
#: actions above all, are large and tell the checker nothing).
KEPT = (
    "type",
    "request_id",
    "game_id",
    "turn_index",
    "player_id",
    "code",
    "message",
    "request_type",
    "invited_by",
    "sender",
    "text",
    "status",
    "accept",
)
REPORT_KEPT = ("game_id", "status", "turn_index", "active_player", "turn")


def _report(report: dict[str, Any]) -> dict[str, Any]:
    kept = {key: report[key] for key in REPORT_KEPT if key in report}
    kept["players"] = [
        [seat.get("local_id"), seat.get("player_id"), seat.get("state")] for seat in report.get("players", [])
    ]
    return kept


def trim(message: dict[str, Any]) -> dict[str, Any]:
    """What the history keeps of a received message."""
    kept = {key: message[key] for key in KEPT if key in message}
    if "status_reports" in message:
        kept["status_reports"] = [_report(report) for report in message["status_reports"]]
    if "status_report" in message:
        kept["status_report"] = _report(message["status_report"])
    if "legal_actions" in message:
        kept["legal"] = len(message["legal_actions"] or [])
    return kept


@dataclass(slots=True)
class Event:
    """``t``: seconds since the run began; ``kind``: send, recv, open, close, fault, heal, note."""

    t: float
    kind: str
    who: str = ""
    conn: int = 0
    node: int = 0
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "t": round(self.t, 4),
            "k": self.kind,
            "w": self.who,
            "c": self.conn,
            "n": self.node,
            "d": self.data,
        }

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Event:
        return cls(row["t"], row["k"], row["w"], row["c"], row["n"], row["d"])


class History:
    def __init__(self) -> None:
        self.start = time.monotonic()
        #: The wall clock at the start, to find a moment of the history in the nodes' logs.
        self.wall = time.time()
        self.events: list[Event] = []

    def now(self) -> float:
        return time.monotonic() - self.start

    def add(self, kind: str, who: str = "", conn: int = 0, node: int = 0, /, **data: Any) -> None:
        self.events.append(Event(self.now(), kind, who, conn, node, data))

    def write(self, path: Path) -> None:
        with path.open("w") as out:
            for event in self.events:
                out.write(json.dumps(event.to_json()) + "\n")

    @classmethod
    def read(cls, path: Path) -> History:
        history = cls()
        with path.open() as rows:
            history.events = [Event.from_json(json.loads(row)) for row in rows if row.strip()]
        return history
