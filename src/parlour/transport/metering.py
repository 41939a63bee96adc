"""What the transport records, in its own terms: the interfaces of a meter.

The transport declares them and imports no meter: ``parlour.metrics.tally.Meter`` implements
them and the composition root (``app.py``) hands one to the runtime, so the layers keep
flowing downward (docs/DESIGN.md, "Layers"). Without a meter nothing is recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from parlour.storage import Record

__all__ = ["ListenerProbe", "RuntimeMeter"]


class ListenerProbe(Protocol):
    """What one listener records of the service it hands frames to."""

    #: Connections opened.
    opened: int

    def observe(self, message: Any, seconds: float) -> None:
        """``message`` (a frame as received) took ``seconds`` to handle."""
        ...

    def failed(self, reason: str) -> None:
        """A transport-level failure: the service raised, a frame was not UTF-8."""
        ...


class RuntimeMeter(Protocol):
    """What the runtime records: each listener's probe, and every commit's outcome."""

    def probe(self, service: object) -> ListenerProbe | None:
        """The probe of ``service`` (looked up once per connection), None if it is not watched."""
        ...

    def committed(self, records: Sequence[Record], seconds: float) -> None:
        """One batch of ``records`` was committed in ``seconds`` (told once per batch)."""
        ...

    def commit_failed(self) -> None:
        """The store refused a batch."""
        ...
