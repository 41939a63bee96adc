"""For tests that drive a service without a transport: commit its Store effects into a real
store before handing the rest on, as the transport does (stored, then shown)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parlour.core.effects import Effect, Store
from parlour.storage import Record
from parlour.storage.sqlite import SQLiteStore

__all__ = ["Recorder"]


class Recorder:
    def __init__(self, store: SQLiteStore, take: Callable[[list[Any]], None]) -> None:
        self.store = store
        self.take = take

    def __call__(self, effects: list[Effect]) -> None:
        records: list[Record] = [r for e in effects if isinstance(e, Store) for r in e.records]
        if records:
            self.store.commit(records)
        self.take([e for e in effects if not isinstance(e, Store)])
