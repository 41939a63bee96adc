"""Structured logs (``log_format = "json"``): one JSON object per line, for log shippers.

Each line holds ``time`` (UTC, ISO 8601 with milliseconds), ``level``, ``logger`` and
``message`` (the formatted text, exactly what the text format would show), plus ``exception``
with the traceback when there is one. Nothing else from the record is copied: the messages are
written never to carry a player id, a token or a password (DESIGN.md, "Habits"), and copying
a record's arguments or extra attributes would bypass that care.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

__all__ = ["JsonFormatter", "configure_logging"]

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.fromtimestamp(record.created, UTC)
        entry = {
            "time": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        # ensure_ascii: a handle with any characters still makes one line of plain ASCII.
        return json.dumps(entry, ensure_ascii=True)


def configure_logging(level: str, form: str = "text") -> logging.Handler:
    """Send the root logger's records to stderr at ``level``, as text or JSON lines."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if form == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    return handler
