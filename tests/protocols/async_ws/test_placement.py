"""Games placed on shards (shards/: placement.py, hub_placement.py, shard.py): the /async scenarios
of one server, played again through a cluster's hub, shard owners, directory and router
(cluster_harness.py), and what only a cluster does."""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from parlour.protocols.async_ws.shards.placement import shard_name
from parlour.protocols.async_ws.shards.shard import ShardService
from tests.protocols.async_ws import (
    test_forget,
    test_lobby,
    test_notify,
    test_observe,
    test_phases,
    test_quickplay,
    test_service,
    test_social,
)
from tests.protocols.async_ws.cluster_harness import ClusterHarness
from tests.protocols.async_ws.failing import FailingCommit

#: Scenarios that read the hub's memory of a running game (in a cluster the hub keeps only a
#: copy, as of the game's last change of status or seats: the shard's owner runs it), or put an
#: observer straight into it: their behaviour is covered through the messages below.
READS_THE_HUB: frozenset[str] = frozenset(
    {
        "test_hot_swap_asks_an_absent_player_in_next_players_order",
        # Reads the hub's own effects for a commit (the shard's: test_a_shard_refuses_...).
        "test_a_refused_commit_is_answered_once_echoing_its_request_id",
        "test_server_rules_play_a_whole_fish_game_with_robots_for_the_absent",
        "test_server_rules_robots_play_their_seats_and_a_restart_replays",
        "test_broadcast_user_data_reaches_the_other_players_and_observers",
        "test_observers_get_the_phases_events_under_client_rules",
        "test_observers_get_the_spectator_view_under_server_rules",
    }
)


def _scenarios(*modules: ModuleType) -> list[tuple[ModuleType, Callable[[], None]]]:
    found = []
    for module in modules:
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if (
                name.startswith("test_")
                and function.__module__ == module.__name__
                and not inspect.signature(function).parameters
                and name not in READS_THE_HUB
            ):
                found.append((module, function))
    return found


SCENARIOS = _scenarios(
    test_service, test_phases, test_observe, test_social, test_lobby, test_notify, test_forget, test_quickplay
)


@pytest.mark.parametrize(
    ("module", "scenario"),
    SCENARIOS,
    ids=[f"{module.__name__.rsplit('.', 1)[-1]}::{scenario.__name__}" for module, scenario in SCENARIOS],
)
def test_one_server_scenarios_hold_in_a_cluster(
    module: ModuleType, scenario: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(module, "Harness", ClusterHarness)
    scenario()


def _two_player_game(h: ClusterHarness) -> tuple[int, int, int]:
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    return h.open_game(ann, bob), ann, bob


def test_a_started_game_runs_on_its_shard_and_turns_never_reach_the_hub() -> None:
    h = ClusterHarness(shards=3)
    game_id, ann, bob = _two_player_game(h)
    owner = h.shard_of(game_id)
    assert h.service.games.is_placed(game_id) and game_id in owner.games
    assert all(game_id not in shard.games for shard in h.shards.values() if shard is not owner)
    hub_inputs = 0
    received = h.service.received

    def counted(conn: int, data: str | bytes, now: float) -> list:  # type: ignore[type-arg]
        nonlocal hub_inputs
        hub_inputs += 1
        return received(conn, data, now)

    h.service.received = counted  # type: ignore[method-assign]
    players = {1: ann, 2: bob}
    for turn in range(1, 21):
        conn = players[1 if turn % 2 else 2]
        h.send(
            conn,
            type="CommitActionRequest",
            game_id=game_id,
            next_state=f"s{turn}",
            next_players=[2 if turn % 2 else 1],
        )
        h.expect(conn, "ActionCommitedRequest", turn_index=turn + 1)
    assert hub_inputs == 0 and h.routed == 20
    assert owner.games[game_id].turn_index == 21
    assert h.service.games[game_id].turn_index == 1  # the hub's copy: turns do not change it
    assert len(h.turns) == 20  # each turn stored by the shard


def test_a_shard_refuses_a_commit_it_could_not_store_once_echoing_its_request_id() -> None:
    """A commit routed to its shard whose records are not stored: the Store's own refusal
    (called by the runtime, with store_failed after it) answers the player who sent it, through
    whichever node holds the connection, echoing its request_id; the game stays as stored."""
    from parlour.core.effects import Store
    from parlour.protocols.async_ws.state.readback import AsyncReload

    h = ClusterHarness(shards=3)
    game_id, ann, bob = _two_player_game(h)
    owner = h.shard_of(game_id)
    stored_row = h.games[game_id]
    frame = {
        "type": "CommitActionRequest",
        "game_id": game_id,
        "next_state": "a",
        "next_players": [2],
        "request_id": "c-7",
    }
    route = h.router.route(ann, msgspec.json.encode(frame).decode(), h.now)
    assert isinstance(route, tuple) and route[0] == owner.name
    effects = owner.noted(route[1], h.now)
    store = effects[0]
    assert isinstance(store, Store) and store.refused is not None
    store.refused(True)
    h.run(owner.store_failed(store.records, [], AsyncReload(async_games={game_id: stored_row}), h.now))
    error = h.error(ann, "INTERNAL_ERROR")
    assert (error["request_id"], error["game_id"]) == ("c-7", game_id), error
    h.none(ann, "ErrorRequest")
    h.none(ann, "ActionCommitedRequest")
    h.none(bob, "ActionRequiredRequest")
    assert owner.games[game_id].turn_index == 1


def test_a_commit_refused_after_its_shard_was_handed_over_is_still_answered() -> None:
    """A shard's owner hands the shard over (a node joined: shares kept fair) while a routed
    commit of it waits for the store, and the store then refuses it: the tenure is over, but
    the player who sent the commit is told INTERNAL_ERROR, echoing its request_id; nothing
    else of that tenure goes out (its games are the next owner's, read from the store)."""
    from parlour.cluster.gateway import ClusterService
    from parlour.core.effects import Effect, Send, Store
    from parlour.protocols.async_ws.state.readback import AsyncReload

    h = ClusterHarness(shards=3)
    game_id, ann, _bob = _two_player_game(h)
    owner = h.shard_of(game_id)
    executed: list[list[Effect]] = []
    gateway = ClusterService(
        owner.name, 1, lambda message: None, lambda effects, *_: executed.append(effects), lambda: True
    )
    gateway.promote(owner, 1)
    frame = {"type": "CommitActionRequest", "game_id": game_id, "next_state": "a", "next_players": [2]}
    route = h.router.route(ann, msgspec.json.encode({**frame, "request_id": "c-9"}).decode(), h.now)
    assert isinstance(route, tuple) and route[0] == owner.name
    assert gateway.noted(route[1], h.now)
    store = executed[-1][0]
    assert isinstance(store, Store) and store.refused is not None
    stored_row = h.games[game_id]  # what the store holds: the game before the commit
    gateway.demote("handed over to keep shares fair")
    store.refused(True)
    # The read-back is the retired tenure's own (on the store thread, before store_failed).
    read: list[object] = []
    owner.reload = lambda records, backend: (
        read.append(records)
        or AsyncReload(  # type: ignore[method-assign]
            async_games={game_id: stored_row}
        )
    )
    reload = gateway.reload(store.records, None)  # type: ignore[arg-type]
    assert read == [store.records] and isinstance(reload, AsyncReload)
    told = gateway.store_failed(store.records, [], reload, h.now)
    assert all(type(effect) is Send for effect in told) and told, told
    h.run(told)
    error = h.error(ann, "INTERNAL_ERROR")
    assert (error["request_id"], error["game_id"]) == ("c-9", game_id), error
    h.none(ann, "ActionCommitedRequest")
    # Kept for a while only: long after any commit of it has been answered, it goes.
    gateway.tick(h.now)
    gateway.tick(h.now + 61)
    assert gateway.retired is None


def test_requests_held_behind_a_shards_failed_commit_are_answered_try_again(tmp_path: Path) -> None:
    """A shard's commit fails while requests that store nothing wait behind it on its owner: a
    WhatsNewPussycatRequest routed there with a game id, and one without, on its way through the
    shards of the player's games (a Gather, here at the first of two). Each answer is dropped
    with the failed commit, and each client is told TRY_AGAIN once, echoing its request_id,
    through whichever node holds its connection; the commit's sender INTERNAL_ERROR."""
    h = ClusterHarness(shards=3)
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    games: dict[int, int] = {}
    while len(games) < 2:
        game_id = h.open_game(ann, bob)
        games.setdefault(game_id % 3, game_id)
    first = min(games)
    game_id = games[first]
    owner = h.shards[shard_name(first)]
    failing = FailingCommit(h, tmp_path / "shard.db")
    failing.behind(owner)
    h.clear()
    commit = {"game_id": game_id, "next_state": "a", "next_players": [2], "request_id": "c-1"}

    async def scenario() -> None:
        await failing.fail(lambda: h.send(ann, type="CommitActionRequest", **commit))
        h.send(bob, type="WhatsNewPussycatRequest", game_id=game_id, request_id="w-1")
        h.send(ann, type="WhatsNewPussycatRequest", request_id="w-2")
        await failing.recover()

    asyncio.run(scenario())
    error = h.error(ann, "INTERNAL_ERROR")
    assert (error["request_id"], error["game_id"]) == ("c-1", game_id), error
    for conn, request_id in ((bob, "w-1"), (ann, "w-2")):
        error = h.expect(conn, "ErrorRequest", code="TRY_AGAIN", request_id=request_id)
        assert error["request_type"] == "WhatsNewPussycatRequest" and "store failed" in error["message"]
    for conn in (ann, bob):
        assert h.inbox[conn] == deque(), h.inbox[conn]
    assert owner.games[game_id].turn_index == 1


def test_a_watch_and_a_request_sent_on_are_told_try_again_if_refused() -> None:
    """What stores nothing still says how it is answered if a failed commit before it takes its
    effects away (a Store of no records, first): a watch on the shard's owner, and a request
    the hub sends on to the shard (whose note is dropped with the hub's refused commit)."""
    from parlour.core.effects import Relay, Store
    from parlour.protocols.async_ws.shards.placement import Watch, encode_note
    from parlour.protocols.async_ws.state.readback import AsyncReload

    h = ClusterHarness(shards=3)
    game_id, ann, _bob = _two_player_game(h)
    eve, eve_id = h.player("eve")
    owner = h.shard_of(game_id)
    effects = owner.noted(encode_note(Watch(game_id, eve, eve_id, True, "o-1")), h.now)
    store = effects[0]
    assert isinstance(store, Store) and store.records == [] and store.refused is not None
    store.refused(True)
    h.run(owner.store_failed([], [], AsyncReload(), h.now))
    error = h.expect(eve, "ErrorRequest", code="TRY_AGAIN", request_id="o-1")
    assert (error["request_type"], error["game_id"]) == ("StartObserveGameRequest", game_id), error

    h.directory.bound.pop(ann)  # the router does not know the connection: the hub sends it on
    frame = {"type": "GetClocksRequest", "game_id": game_id, "request_id": "k-1"}
    effects = h.service.received(ann, msgspec.json.encode(frame).decode(), h.now)
    store = effects[0]
    assert isinstance(store, Store) and store.records == [] and store.refused is not None
    assert [type(effect) for effect in effects[1:]] == [Relay]
    store.refused(False)
    h.run(h.service.store_failed([], [], AsyncReload(), h.now))
    error = h.expect(ann, "ErrorRequest", code="TRY_AGAIN", request_id="k-1")
    assert (error["request_type"], error["game_id"]) == ("GetClocksRequest", game_id), error
    h.none(ann, "ErrorRequest")
    h.none(eve, "ErrorRequest")


def test_whats_new_gathers_the_reports_of_every_shard() -> None:
    h = ClusterHarness(shards=3)
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    started = [h.open_game(ann, bob) for _ in range(3)]
    shards = {game_id % 3 for game_id in started}
    assert len(shards) == 3
    h.send(ann, type="LobbyCreateGameRequest", configuration={"game_type": "test", "max_players": 2})
    waiting = h.expect(ann, "LobbyGameCreatedRequest")["game_id"]
    h.clear()
    h.send(ann, type="WhatsNewPussycatRequest", request_id="w1")
    report = h.expect(ann, "GameStatusReportRequest", request_id="w1")
    assert [entry["game_id"] for entry in report["status_reports"]] == sorted([*started, waiting])
    h.send(bob, type="WhatsNewPussycatRequest", game_id=started[1], request_id="w2")
    assert [
        r["game_id"] for r in h.expect(bob, "GameStatusReportRequest", request_id="w2")["status_reports"]
    ] == [started[1]]


def test_whats_new_never_leaves_out_a_game_its_shard_does_not_hold_yet() -> None:
    """The owner of a game's shard does not hold it (a new owner still reading it back): the
    player's WhatsNewPussycatRequest is told TRY_AGAIN, not answered without the game (which a
    client reads as a game that ended), and the owner reads the game from the store; asked
    again, the answer lists it."""
    h = ClusterHarness(shards=3)
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    started = [h.open_game(ann, bob) for _ in range(3)]
    lacking = started[1]
    owner = h.shard_of(lacking)
    owner.games.reload({lacking: None}, h.now)  # gone from the owner's memory, not the store's
    h.clear()
    h.send(ann, type="WhatsNewPussycatRequest", request_id="w1")
    error = h.expect(ann, "ErrorRequest", code="TRY_AGAIN", request_id="w1")
    assert error["request_type"] == "WhatsNewPussycatRequest", error
    h.none(ann, "GameStatusReportRequest")
    assert lacking in owner.games  # read back from the store meanwhile
    h.send(ann, type="WhatsNewPussycatRequest", request_id="w2")
    report = h.expect(ann, "GameStatusReportRequest", request_id="w2")
    assert [entry["game_id"] for entry in report["status_reports"]] == sorted(started)


def test_a_late_sign_out_of_an_older_connection_leaves_the_newer_one_standing() -> None:
    """A player leaves connection A for B; the note that A signed out reaches a node after the
    one that B signed in (held up on its way). Every node's directory keeps B: the player's
    games still send there, and the shard does not hand the player's turns to others."""
    from parlour.core.effects import Relay
    from parlour.protocols.async_ws.shards.placement import EVERYONE, Online, encode_note

    h = ClusterHarness(shards=2)
    game_id, ann, _bob = _two_player_game(h)
    ann_id = h.directory.bound[ann]
    again = h.back("ann")
    assert h.directory.online[ann_id] == again
    h.clear()
    late = Relay(EVERYONE, encode_note(Online(ann_id, ann, False)))
    h.run([late])
    assert h.directory.online[ann_id] == again and ann not in h.directory.bound
    h.send(
        again, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2], request_id="c1"
    )
    h.expect(again, "ActionCommitedRequest", request_id="c1", turn_index=2)


def test_a_request_for_a_shard_without_owner_is_refused_try_again() -> None:
    h = ClusterHarness(shards=2)
    game_id, ann, _bob = _two_player_game(h)
    h.unowned.add(shard_name(game_id % 2))
    h.send(
        ann, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2], request_id="c1"
    )
    error = h.error(ann, "TRY_AGAIN")
    assert error["request_id"] == "c1" and error["request_type"] == "CommitActionRequest"
    assert error["game_id"] == game_id
    h.unowned.clear()
    h.send(
        ann, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2], request_id="c2"
    )
    h.expect(ann, "ActionCommitedRequest", request_id="c2", turn_index=2)


def test_a_connection_the_router_does_not_know_yet_goes_through_the_hub() -> None:
    h = ClusterHarness(shards=2)
    game_id, ann, bob = _two_player_game(h)
    h.directory.bound.pop(ann)  # the Online note has not reached this node yet
    h.send(
        ann, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2], request_id="c1"
    )
    h.expect(ann, "ActionCommitedRequest", request_id="c1", turn_index=2)
    assert h.routed == 0
    h.expect(bob, "ActionRequiredRequest", turn_index=2)


def test_the_hub_copy_follows_forfeits_and_the_end_and_ratings_reach_every_node() -> None:
    h = ClusterHarness(shards=2)
    ann, ann_id = h.player("ann")
    bob, bob_id = h.player("bob")
    game_id = h.open_game(ann, bob, ranked=True)
    h.send(ann, type="GameOverRequest", game_id=game_id, finalScores={"1": [3, 1], "2": [1, 2]})
    h.expect(bob, "GameOutcomeRequest")
    for conn in (ann, bob):
        h.send(conn, type="GameOutcomeConfirmationRequest", game_id=game_id)
    copy = h.service.games[game_id]
    assert copy.status == "OVER" and game_id not in [g.id for g in h.service.games.live_games(ann_id)]
    assert h.service.hub.accounts[ann_id].ratings["test"][2] == 1  # the hub's accounts
    assert h.directory.accounts[bob_id].ratings["test"][2] == 1  # every node's copy
    h.send(bob, type="AskPlayerInfoRequest", player_id=ann_id)
    assert h.expect(bob, "LobbyPlayerInfoRequest")["player"]["games_played"] == 1


def test_a_returning_player_is_asked_again_by_the_shard() -> None:
    h = ClusterHarness(shards=2)
    game_id, ann, _bob = _two_player_game(h)
    h.drop(ann)
    h.clear()
    again = h.back("ann")
    h.expect(again, "ActionRequiredRequest", game_id=game_id, turn_index=1)


def test_a_new_owner_restores_its_shard_and_asks_the_players_again() -> None:
    h = ClusterHarness(shards=2)
    game_id, ann, bob = _two_player_game(h)
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="x", next_players=[2])
    h.clear()
    name = shard_name(game_id % 2)
    old = h.shards[name]
    new = ShardService(old.shard, 2, h.directory, h.service.hub.limits)
    h.run(new.restore(list(h.games.values()), h.now, h.now + 5))
    h.shards[name] = new
    assert new.games[game_id].turn_index == 2 and len(new.games) == 1
    h.expect(bob, "ActionRequiredRequest", game_id=game_id, turn_index=2)
    h.send(bob, type="CommitActionRequest", game_id=game_id, next_state="y", next_players=[1])
    h.expect(bob, "ActionCommitedRequest", turn_index=3)


def test_a_quick_play_game_is_placed_on_its_shard_like_any_game_that_starts() -> None:
    """Queue requests carry no game id: the router sends them to the hub, whose matchmaker makes
    the game; it starts there and runs on its shard's owner, robots included."""
    h = ClusterHarness(shards=3)
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    h.send(ann, type="QuickPlayJoinRequest", game_type="fish", seats=3, robots_after=5)
    h.send(bob, type="QuickPlayJoinRequest", game_type="fish", seats=3, robots_after=5)
    assert h.routed == 0  # both went to the hub
    h.none(ann, "QuickPlayMatchedRequest")
    h.advance(5.0)
    game_id = h.expect(ann, "QuickPlayMatchedRequest", robots=1)["game_id"]
    assert h.expect(bob, "QuickPlayMatchedRequest")["game_id"] == game_id
    owner = h.shard_of(game_id)
    assert h.service.games.is_placed(game_id) and game_id in owner.games
    prompt = h.expect(ann, "ActionRequiredRequest", game_id=game_id)
    h.send(ann, type="CommitActionRequest", game_id=game_id, turn_index=1, action=prompt["legal_actions"][0])
    h.expect(ann, "ActionCommitedRequest", game_id=game_id)
    assert h.routed == 1 and owner.games[game_id].turn_index > 1


def test_an_abort_its_owner_could_not_store_is_answered_so_and_changes_nothing() -> None:
    from parlour.core.effects import Relay, Store
    from parlour.protocols.async_ws.shards.placement import (
        NOT_SAVED,
        AbortDone,
        AbortGame,
        decode_note,
        encode_note,
    )
    from parlour.protocols.async_ws.state.readback import AsyncReload

    h = ClusterHarness(shards=3)
    game_id, _ann, _bob = _two_player_game(h)
    owner = h.shard_of(game_id)
    stored_row = h.games[game_id]
    effects = owner.noted(encode_note(AbortGame(7, game_id, "stuck")), h.now)
    store = effects[0]
    assert isinstance(store, Store) and store.refused is not None
    # The answer is released only after the commit: it follows the records.
    (done,) = [decode_note(e.data) for e in effects if isinstance(e, Relay) and b"abort_done" in e.data]
    assert done == AbortDone(7, game_id, None)
    store.refused(True)
    after = owner.store_failed(store.records, [], AsyncReload(async_games={game_id: stored_row}), h.now)
    told = [decode_note(e.data) for e in after if isinstance(e, Relay)]
    assert AbortDone(7, game_id, NOT_SAVED) in told
    assert owner.games[game_id].status == "RUNNING"


def _commit(h: ClusterHarness, conn: int, game_id: int, request_id: str) -> None:
    h.send(
        conn,
        type="CommitActionRequest",
        game_id=game_id,
        next_state=request_id,
        next_players=[2],
        request_id=request_id,
    )


def test_a_game_the_store_lost_is_unknown_after_the_read_back_never_moving() -> None:
    """A commit failed and the store, read back, holds no such game (it lost the game's rows):
    the shard drops it and tells the hub, which drops its copy. Every request for the game is
    then answered UNKNOWN_GAME, whichever way it comes (routed to the shard, or through the hub
    for a connection the router does not know yet), never TRY_AGAIN."""
    from parlour.protocols.async_ws.state.readback import AsyncReload

    h = ClusterHarness(shards=3)
    game_id, ann, bob = _two_player_game(h)
    owner = h.shard_of(game_id)
    del h.games[game_id]
    h.run(owner.store_failed([], [], AsyncReload(async_games={game_id: None}), h.now))
    h.clear()
    for conn in (ann, bob):
        h.send(conn, type="WhatsNewPussycatRequest", game_id=game_id, request_id="w1")
        assert h.error(conn, "UNKNOWN_GAME")["request_id"] == "w1"
    _commit(h, ann, game_id, "c1")
    assert h.error(ann, "UNKNOWN_GAME")["request_id"] == "c1"
    h.directory.bound.pop(bob)  # the Online note has not reached this node yet: through the hub
    h.send(bob, type="WhatsNewPussycatRequest", game_id=game_id, request_id="w2")
    assert h.error(bob, "UNKNOWN_GAME")["request_id"] == "w2"
    h.none(ann, "ErrorRequest")
    h.none(bob, "ErrorRequest")
    assert game_id not in owner.games and game_id not in h.service.games


def test_a_started_game_its_shard_does_not_hold_is_read_from_the_store() -> None:
    """The hub holds a started game that its shard does not (the Placed note was lost: nobody
    owned the shard at that moment, or Redis dropped it). The first request the hub sends on
    makes the shard read the game from the store (the request itself is answered TRY_AGAIN);
    from then on the shard runs it. A game the store does not hold either leaves the hub: it is
    unknown."""
    h = ClusterHarness(shards=3)
    ann, _ = h.player("ann")
    bob, _ = h.player("bob")
    kept, lost = h.service.games.next_id, h.service.games.next_id + 3  # both on one shard
    owner = h.shards[shard_name(kept % 3)]
    h.unowned.add(owner.name)
    assert h.open_game(ann, bob) == kept
    for _ in range(2):  # games on the other shards
        h.open_game(ann, bob)
    assert h.open_game(ann, bob) == lost
    h.unowned.clear()
    del h.games[lost]  # and the store lost this one
    assert kept not in owner.games and lost not in owner.games
    assert h.service.games.is_placed(kept) and h.service.games.is_placed(lost)
    h.clear()

    _commit(h, ann, kept, "c1")
    assert h.error(ann, "TRY_AGAIN")["request_id"] == "c1"
    assert kept in owner.games  # read meanwhile
    h.expect(ann, "ActionRequiredRequest", game_id=kept, turn_index=1)  # asked again
    _commit(h, ann, kept, "c2")
    h.expect(ann, "ActionCommitedRequest", request_id="c2", turn_index=2)
    h.expect(bob, "ActionRequiredRequest", game_id=kept, turn_index=2)

    h.send(bob, type="WhatsNewPussycatRequest", game_id=lost, request_id="w1")
    assert h.error(bob, "TRY_AGAIN")["request_id"] == "w1"
    assert lost not in h.service.games and lost not in owner.games
    h.send(bob, type="WhatsNewPussycatRequest", game_id=lost, request_id="w2")
    assert h.error(bob, "UNKNOWN_GAME")["request_id"] == "w2"
