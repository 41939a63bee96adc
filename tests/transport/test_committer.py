"""One interface for whatever commits (transport.committer): the factory picks the redo log, a
writer process or the store thread as the settings and the store allow, and each commits a batch
and answers it through the same calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from parlour.storage import MetaRow, open_store
from parlour.transport.committer import Committer, ThreadCommitter, open_committer
from parlour.transport.redo import LogCommitter
from parlour.transport.store_thread import StoreThread
from parlour.transport.writer import ProcessCommitter


@pytest.mark.parametrize(
    ("store_writer", "sync", "kind"),
    [
        ("log", "normal", LogCommitter),
        ("log", "full", ProcessCommitter),  # the redo log is for store_sync = normal only
        ("process", "normal", ProcessCommitter),
        ("thread", "normal", ThreadCommitter),
    ],
)
def test_the_committer_chosen_commits_and_answers_through_the_one_interface(
    tmp_path: Path, store_writer: str, sync: str, kind: type
) -> None:
    store = open_store(str(tmp_path / "p.db"), sync)
    assert store is not None

    async def scenario() -> None:
        thread = StoreThread(store, asyncio.get_running_loop())
        committer: Committer = open_committer(store, store_writer, thread, asyncio.get_running_loop())
        assert type(committer) is kind
        answered: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()
        committer.commit([MetaRow("k", store_writer)], 0, answered.set_result)
        while not answered.done():
            committer.poll()
            await asyncio.sleep(0.005)
        assert answered.result() is None
        await committer.caught_up()
        assert not committer.failing and committer.unapplied == 0 and committer.transactions >= 1
        assert await asyncio.wrap_future(thread.run(lambda: store.meta("k"))) == store_writer
        await committer.close()
        thread.close()

    try:
        asyncio.run(scenario())
    finally:
        store.close()
