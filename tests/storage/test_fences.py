"""Fences (a cluster's fencing tokens, parlour.storage.records.Fence), on both backends: a commit
carrying one is stored only while ``parlour_meta`` holds its value, and a claim of the key made
while such a commit is under way waits for it, so that whoever claims next reads it."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from parlour.storage import Fence, Fenced, MetaRow, Record
from parlour.storage.sql import Cursor, SQLStore
from tests.storage.conftest import open_at
from tests.storage.rows import account

KEY = "cluster_epoch_async"


def test_a_fenced_commit_is_stored_only_while_its_fence_holds(store: SQLStore, store_location: str) -> None:
    mine, theirs = Fence(KEY, "1:1:aaaa"), Fence(KEY, "2:2:bbbb")
    with pytest.raises(Fenced):  # nobody has claimed the key yet
        store.commit([account(1), mine])
    assert store.accounts() == []
    store.commit([MetaRow(KEY, mine.value)])  # the claim
    store.commit([account(1), mine])
    assert [row.id for row in store.accounts()] == [1]

    other = open_at(store_location)  # another node claims it
    try:
        other.commit([MetaRow(KEY, theirs.value)])
        other.commit([account(3), theirs])
    finally:
        other.close()
    with pytest.raises(Fenced, match=KEY):
        store.commit([account(2), MetaRow("motd", "stale"), mine])
    # Refused whole: nothing of it is stored, whatever came before the fence in the batch.
    assert [row.id for row in store.accounts()] == [1, 3]
    assert store.meta("motd") is None
    assert store.meta(KEY) == theirs.value


def test_every_fence_of_a_commit_is_checked(store: SQLStore) -> None:
    """A node in a sharded cluster commits a fence per lease it holds, read in one statement:
    one of them claimed by another node refuses the whole commit."""
    shards = [Fence(f"cluster_epoch_async/{n}", f"1:{n}:aaaa") for n in range(3)]
    store.commit([MetaRow(fence.key, fence.value) for fence in shards])
    store.commit([account(1), *shards])
    store.commit([MetaRow(shards[1].key, "2:9:bbbb")])  # another node claims one shard
    with pytest.raises(Fenced, match="async/1"):
        store.commit([account(2), *shards])
    with pytest.raises(Fenced):  # the same key under an older value too
        store.commit([account(3), shards[0], Fence(shards[0].key, "1:0:old")])
    assert [row.id for row in store.accounts()] == [1]


def test_a_claim_waits_for_a_fenced_commit_under_way(store: SQLStore, store_location: str) -> None:
    """The old owner's commit has passed its fence and not committed yet when the new owner
    claims the key: the claim waits, so the new owner's restore (after its claim) reads it."""
    mine = Fence(KEY, "1:1:aaaa")
    store.commit([MetaRow(KEY, mine.value)])
    checked, release = threading.Event(), threading.Event()

    def slow_commit(cur: Cursor, records: list[Record]) -> None:
        store._fenced_write(cur, records)
        checked.set()
        release.wait(10)

    old_owner = threading.Thread(target=store._transaction, args=(slow_commit, [account(1), mine]))
    old_owner.start()
    assert checked.wait(10)
    claimed: dict[str, Any] = {}

    def claim() -> None:
        other = open_at(store_location)
        try:
            other.commit([MetaRow(KEY, "2:2:bbbb")])
            claimed["at"] = time.monotonic()
            claimed["accounts"] = [row.id for row in other.accounts()]
        finally:
            other.close()

    new_owner = threading.Thread(target=claim)
    new_owner.start()
    time.sleep(0.3)
    assert new_owner.is_alive(), "the claim did not wait for the commit under way"
    released = time.monotonic()
    release.set()
    old_owner.join(10)
    new_owner.join(10)
    assert claimed["at"] >= released
    assert claimed["accounts"] == [1]  # what the old owner committed first, the new one reads
    assert store.meta(KEY) == "2:2:bbbb"
