"""A batch of records as bytes: what the writer process's socket carries (storage.pipe) and
what the redo log holds (storage.redo). msgpack: (batch number, generation, [(kind, record),
...]), each record tagged with the short name of its kind; msgpack carries bytes as they are, so
the /async documents and notification payloads cross unchanged."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from parlour.storage import records as rows
from parlour.storage.records import Record

__all__ = ["KINDS", "batch_body", "decode_batch"]

#: Every kind of record, by the short name that tags it in a frame (records.KINDS).
KINDS: dict[str, type[Record]] = {kind.name: kind.record for kind in rows.KINDS}
NAMES: dict[type[Record], str] = {kind: name for name, kind in KINDS.items()}
_encode = msgspec.msgpack.Encoder().encode
_batch = msgspec.msgpack.Decoder(tuple[int, int, list[tuple[str, msgspec.Raw]]])
_records = {name: msgspec.msgpack.Decoder(kind) for name, kind in KINDS.items()}


def batch_body(batch: int, generation: int, records: Sequence[Record]) -> bytes:
    """A batch as msgpack: what a frame carries (here and in the redo log, storage.redo)."""
    return _encode((batch, generation, [(NAMES[type(record)], record) for record in records]))


def decode_batch(body: bytes) -> tuple[int, int, list[Record]]:
    batch, generation, ops = _batch.decode(body)
    return batch, generation, [_records[name].decode(raw) for name, raw in ops]
