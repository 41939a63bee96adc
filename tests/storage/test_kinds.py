"""The kinds of record, declared once (records.KINDS): the Record union, a batch's short names,
an export's names and the store's table writes all follow that one table."""

from __future__ import annotations

from typing import get_args

from parlour.storage import batches
from parlour.storage.records import EXPORT_KINDS, KINDS, AccountErased, AccountSeen, Fence, Record
from parlour.storage.tables import WRITES


def test_every_record_type_is_one_kind_with_names_of_its_own() -> None:
    records = [kind.record for kind in KINDS]
    assert sorted(records, key=lambda record: record.__name__) == sorted(
        get_args(Record), key=lambda record: record.__name__
    )
    assert len(set(records)) == len(records)
    names = [kind.name for kind in KINDS]
    assert len(set(names)) == len(names)
    exports = [kind.export for kind in KINDS if kind.export is not None]
    assert len(set(exports)) == len(exports)


def test_batches_and_exports_take_their_names_from_the_kinds() -> None:
    assert {kind.name: kind.record for kind in KINDS} == batches.KINDS
    assert list(EXPORT_KINDS) == [kind.export for kind in KINDS if kind.export is not None]
    # What an export names is what a store holds as rows: the kinds that are rows of a table.
    assert set(EXPORT_KINDS.values()) <= set(WRITES)


def test_the_store_writes_every_kind_but_those_it_handles_apart() -> None:
    """A Fence is a condition on a commit; an erased or seen account changes columns of an
    account's row (storage/writes.py): every other kind is a table's write."""
    apart = {Fence, AccountErased, AccountSeen}
    assert set(WRITES) == {kind.record for kind in KINDS} - apart
