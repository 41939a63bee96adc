"""The lobby lists in a large lobby (docs/async.md "Lobby lists"): the seed's lists capped to
``list_cap`` entries (those who have waited longest, then one's buddies; the oldest open games),
the whole lists on request, and the deltas a client opts in to (a Parlour extension), each push
encoded once for everyone who gets the same bytes."""

from __future__ import annotations

import base64
import importlib.util
import re
import sys
import zlib
from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.core.effects import Broadcast, Send
from parlour.protocols.async_ws.state.hub import AsyncLimits
from tests.protocols.async_ws.harness import Harness

INTERVAL = 2.0
BENCH = Path(__file__).resolve().parents[3] / "bench" / "lobby.py"


def inflate(text: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = msgspec.json.decode(zlib.decompress(base64.b64decode(text)))
    return items


def last(h: Harness, conn: int, kind: str) -> dict[str, Any] | None:
    """The last queued message of ``kind`` for ``conn``; the queue is emptied."""
    found = [message for message in h.inbox[conn] if message["type"] == kind]
    h.inbox[conn].clear()
    return found[-1] if found else None


def ids(h: Harness, conn: int) -> list[int] | None:
    """The player ids of the last LobbyPlayerListRequest queued for ``conn``, None if none."""
    message = [m for m in h.inbox[conn] if m["type"] == "LobbyPlayerListRequest"]
    return [p["player_id"] for p in inflate(message[-1]["player_list"])] if message else None


def game_ids(h: Harness, conn: int) -> list[int] | None:
    message = [m for m in h.inbox[conn] if m["type"] == "LobbyGameListRequest"]
    return [g["game_id"] for g in inflate(message[-1]["game_list"])] if message else None


def enter(h: Harness, name: str, deltas: bool = False) -> tuple[int, int]:
    conn, player_id = h.player(name)
    h.send(conn, type="EnterLobbyRequest", **({"deltas": True} if deltas else {}))
    h.expect(conn, "LobbyEnteredRequest")
    return conn, player_id


def tick(h: Harness) -> list[Any]:
    """One due push: its effects (also delivered to the inboxes)."""
    h.now += INTERVAL
    effects = h.service.tick(h.now)
    h.run(effects)
    return effects


class Mirror:
    """What a client that takes deltas holds: the whole lists, then each delta applied."""

    def __init__(self, h: Harness, conn: int) -> None:
        self.h, self.conn = h, conn
        self.players: dict[int, dict[str, Any]] = {}
        self.games: dict[int, dict[str, Any]] = {}

    def read(self) -> list[dict[str, Any]]:
        """Applies what is queued; the deltas read."""
        deltas = []
        for message in self.h.inbox[self.conn]:
            kind = message["type"]
            if kind == "LobbyPlayerListRequest":
                self.players = {p["player_id"]: p for p in inflate(message["player_list"])}
            elif kind == "LobbyGameListRequest":
                self.games = {g["game_id"]: g for g in inflate(message["game_list"])}
            elif kind == "LobbyListDeltaRequest":
                deltas.append(message)
                for player in message.get("players", []):
                    self.players[player["player_id"]] = player
                for player_id in message.get("left", []):
                    self.players.pop(player_id, None)
                for game in message.get("games", []):
                    self.games[game["game_id"]] = game
                for game_id in message.get("closed", []):
                    self.games.pop(game_id, None)
                assert (len(self.players), len(self.games)) == (
                    message["player_count"],
                    message["game_count"],
                )
        self.h.inbox[self.conn].clear()
        return deltas

    def matches(self, asker: int) -> bool:
        """Whether the mirror holds the whole lists, as GetLobbyListsRequest tells ``asker``."""
        self.h.send(asker, type="GetLobbyListsRequest", request_id="whole")
        players = self.h.expect(asker, "LobbyPlayerListRequest", request_id="whole")
        games = self.h.expect(asker, "LobbyGameListRequest", request_id="whole")
        return (sorted(self.players.values(), key=lambda p: p["player_id"]), sorted(self.games)) == (
            inflate(players["player_list"]),
            [g["game_id"] for g in inflate(games["game_list"])],
        )


def test_a_lobby_within_the_cap_gets_the_whole_lists_in_one_broadcast() -> None:
    h = Harness(AsyncLimits(list_cap=10))
    members = [enter(h, name) for name in ("ann", "bob", "cid")]
    everyone = sorted(player_id for _, player_id in members)
    assert ids(h, members[2][0]) == everyone  # by id, as the seed's lists always were
    h.clear()
    dee, dee_id = enter(h, "dee")
    assert ids(h, dee) == [*everyone, dee_id]  # the lobby as it is, the newcomer included
    h.clear()
    effects = tick(h)
    lists = [e for e in effects if isinstance(e, (Send, Broadcast)) and b"LobbyPlayerListRequest" in e.data]
    assert len(lists) == 1 and isinstance(lists[0], Broadcast)  # encoded once for the three others
    assert len(lists[0].conns) == 3
    assert ids(h, members[0][0]) == [*everyone, dee_id]
    h.none(dee, "LobbyPlayerListRequest")


def test_a_large_lobby_caps_each_list_to_the_longest_waiting_and_ones_buddies() -> None:
    h = Harness(AsyncLimits(list_cap=3))
    ann, ann_id = enter(h, "ann")
    bob, bob_id = enter(h, "bob")
    cid, cid_id = enter(h, "cid")
    dee, dee_id = enter(h, "dee")
    eve, eve_id = h.player("eve")
    h.send(ann, type="AsyncBuddyManagementRequest", operation="ADD", player_id=eve_id)
    h.send(eve, type="EnterLobbyRequest")
    assert ids(h, dee) == [ann_id, bob_id, cid_id]  # dee entered past the cap: the first three
    assert ids(h, eve) == [ann_id, bob_id, cid_id]
    h.clear()
    effects = tick(h)
    # ann sees the three who have waited longest, then her buddy eve; the others share one list.
    assert ids(h, ann) == [ann_id, bob_id, cid_id, eve_id]
    assert ids(h, dee) is None and ids(h, eve) is None  # they have the window already
    # bob had the lobby before cid came; cid had it whole, as it was within the cap (the same
    # players, but not the window's bytes): both get the window, in one broadcast.
    assert ids(h, bob) == ids(h, cid) == [ann_id, bob_id, cid_id]
    lists = [e for e in effects if b"LobbyPlayerListRequest" in getattr(e, "data", b"")]
    assert sorted((type(e).__name__, len(e.conns) if isinstance(e, Broadcast) else 1) for e in lists) == [
        ("Broadcast", 2),
        ("Send", 1),
    ]
    h.clear()
    # bob leaves: the window moves on to dee, for all at once.
    h.send(bob, type="ExitLobbyRequest")
    h.clear()
    effects = tick(h)
    lists = [e for e in effects if b"LobbyPlayerListRequest" in getattr(e, "data", b"")]
    assert sorted(type(e).__name__ for e in lists) == ["Broadcast", "Send"]
    assert ids(h, cid) == ids(h, dee) == ids(h, eve) == [ann_id, cid_id, dee_id]
    assert ids(h, ann) == [ann_id, cid_id, dee_id, eve_id]
    # The whole list on request, with its request_id, capped or not.
    h.clear()
    h.send(dee, type="GetLobbyListsRequest", request_id="all")
    whole = h.expect(dee, "LobbyPlayerListRequest", request_id="all")
    assert [p["player_id"] for p in inflate(whole["player_list"])] == [ann_id, cid_id, dee_id, eve_id]
    h.expect(dee, "LobbyGameListRequest", request_id="all")
    # Someone entering past the window changes nobody's list: nothing is sent to them; dee, who
    # asked for the whole list, is sent its capped list again.
    enter(h, "fay")
    h.clear()
    tick(h)
    assert ids(h, ann) is None and ids(h, cid) is None and ids(h, eve) is None
    assert ids(h, dee) == [ann_id, cid_id, dee_id]
    # ann's buddy leaves: ann gets the window alone, the same bytes as everyone.
    h.send(eve, type="ExitLobbyRequest")
    h.clear()
    tick(h)
    assert ids(h, ann) == [ann_id, cid_id, dee_id] and ids(h, cid) is None


def test_the_open_games_are_capped_to_the_oldest() -> None:
    h = Harness(AsyncLimits(list_cap=2))
    makers = [enter(h, name) for name in ("ann", "bob", "cid")]
    watcher, _ = enter(h, "dee")
    games = []
    for conn, _ in makers:
        h.send(conn, type="LobbyCreateGameRequest", configuration={"game_type": "test", "max_players": 2})
        games.append(h.expect(conn, "LobbyGameCreatedRequest")["game_id"])
    h.clear()
    tick(h)
    assert game_ids(h, watcher) == games[:2]
    h.send(watcher, type="GetLobbyListsRequest")
    assert game_ids(h, watcher) == games


def test_deltas_follow_entries_exits_presence_and_games() -> None:
    h = Harness(AsyncLimits(list_cap=2))
    ann, ann_id = enter(h, "ann", deltas=True)
    mirror = Mirror(h, ann)
    mirror.read()
    assert list(mirror.players) == [ann_id] and mirror.games == {}
    bob, bob_id = enter(h, "bob")
    cid, cid_id = enter(h, "cid", deltas=True)
    tick(h)
    (delta,) = mirror.read()
    assert [p["player_id"] for p in delta["players"]] == [ann_id, bob_id, cid_id]
    assert mirror.matches(cid)
    h.clear(bob, cid)

    # A game opened: in the delta, one message encoded once for both who take deltas.
    game_id = h.open_game(bob, max_players=2)
    effects = tick(h)
    deltas = [e for e in effects if b"LobbyListDeltaRequest" in getattr(e, "data", b"")]
    assert len(deltas) == 1 and isinstance(deltas[0], Broadcast) and len(deltas[0].conns) == 2
    (delta,) = mirror.read()
    assert [g["game_id"] for g in delta["games"]] == [game_id] and "players" not in delta
    assert mirror.matches(cid)

    # A seat taken starts the game: closed, and its two players leave the lobby.
    h.send(cid, type="LobbyJoinGameRequest", game_id=game_id)
    tick(h)
    (delta,) = mirror.read()
    assert delta["closed"] == [game_id] and delta["left"] == [bob_id, cid_id]
    assert delta["player_count"] == 1 and delta["game_count"] == 0

    # Presence: bob comes back to the lobby and switches his UI to his game, then back.
    dee, _ = enter(h, "dee")
    h.send(bob, type="EnterLobbyRequest")
    h.send(bob, type="SwitchedToGameRequest", game_id=game_id)
    tick(h)
    mirror.read()
    assert mirror.players[bob_id]["presence"] == "IN_GAME"
    h.send(bob, type="SwitchedToGameRequest")
    tick(h)
    (delta,) = mirror.read()
    assert delta["players"] == [{"player_id": bob_id, "name": "bob", "presence": "ONLINE"}]
    assert "left" not in delta and "games" not in delta
    assert mirror.matches(bob)

    # Nothing changed: nothing pushed.
    h.clear()
    assert not [e for e in tick(h) if b"Lobby" in getattr(e, "data", b"")]
    h.none(ann, "LobbyListDeltaRequest")
    h.none(dee, "LobbyPlayerListRequest")


def test_a_client_may_opt_in_after_entering_and_back_out() -> None:
    h = Harness(AsyncLimits(list_cap=2))
    ann, _ = enter(h, "ann")
    enter(h, "bob")
    enter(h, "cid")
    h.clear()
    h.send(ann, type="GetLobbyListsRequest", deltas=True, request_id="d")
    h.expect(ann, "LobbyPlayerListRequest", request_id="d")
    h.expect(ann, "LobbyGameListRequest", request_id="d")
    h.inbox[ann].clear()
    tick(h)
    h.send(ann, type="GetLobbyListsRequest", request_id="d")  # the whole lists, past the cap
    mirror = Mirror(h, ann)
    mirror.read()
    assert len(mirror.players) == 3
    dee, _ = enter(h, "dee")
    tick(h)
    h.none(ann, "LobbyPlayerListRequest")  # deltas only, from now on
    assert len(mirror.read()) == 1 and len(mirror.players) == 4
    assert mirror.matches(dee)

    h.send(ann, type="GetLobbyListsRequest", deltas=False)
    h.clear(ann)
    h.send(dee, type="ExitLobbyRequest")
    tick(h)
    h.none(ann, "LobbyListDeltaRequest")
    assert ids(h, ann) is not None and len(ids(h, ann) or []) == 2  # the seed's capped list again


def test_a_reconnecting_client_gets_the_whole_lists_again() -> None:
    h = Harness(AsyncLimits(list_cap=2))
    watcher, _ = enter(h, "ann", deltas=True)
    mirror = Mirror(h, watcher)
    bob, bob_id = enter(h, "bob", deltas=True)
    tick(h)
    mirror.read()
    # bob's connection drops; a new one signs in and enters with deltas: whole lists at once.
    h.drop(bob)
    h.clear(bob)
    token, _ = h.service.tokens.issue(bob_id, "bob", h.now)
    again = h.connect()
    h.send(again, type="AsyncAuthRequest", name="bob", sessionToken=token)
    h.send(again, type="EnterLobbyRequest", deltas=True)
    again_mirror = Mirror(h, again)
    again_mirror.read()
    assert sorted(again_mirror.players) == sorted(mirror.players)
    tick(h)
    # bob left and came back between two pushes: the others see him listed, as he is.
    mirror.read()
    assert bob_id in mirror.players
    assert mirror.matches(watcher)
    again_mirror.read()
    assert again_mirror.matches(again)
    assert not h.inbox[bob]


def test_a_short_churn_of_the_bench_costs_less_than_whole_lists(capsys: pytest.CaptureFixture[str]) -> None:
    """A seeded slice of bench/lobby.py: 300 members, 5 leaves and entries a second for 6 s."""
    spec = importlib.util.spec_from_file_location("bench_lobby", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up by name
    spec.loader.exec_module(bench)
    assert bench.main(["--sizes", "300", "--seconds", "6", "--churn", "5", "--cap", "20", "--seed", "4"]) == 0
    rows = {
        mode: float(ratio)
        for mode, ratio in re.findall(
            r"^ +300 (\w+) +[\d,]+ +[\d,]+ +[\d.]+ +([\d.]+)x", capsys.readouterr().out, re.M
        )
    }
    assert rows["whole"] == 1.0
    assert 0 < rows["capped"] < 0.5 and 0 < rows["deltas"] < 0.5  # and the deltas were applied right
