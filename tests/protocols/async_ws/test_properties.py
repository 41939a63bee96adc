"""Random interleavings of requests from 4 clients never break the /async invariants:
one seat to play per running game (or a simultaneous turn that still waits for data, or an open
interruption window), turn indexes that only go up, no acknowledged commit missing from the
store, and the stored game always equal to the live one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parlour.protocols.async_ws import service
from parlour.protocols.async_ws.game.model import AsyncGame, decode_game
from parlour.protocols.async_ws.ingame.phase_requests import PHASE_HANDLERS
from tests.protocols.async_ws.harness import Harness

CLIENTS = 4

Step = tuple[str, int, int, int]
steps = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "create",
                "join",
                "leave",
                "start",
                "commit",
                "commit",
                "commit",
                "robot",
                "stale",
                "forfeit",
                "over",
                "confirm",
                "invite",
                "answer",
                "whatsnew",
                "wait",
                "reconnect",
                "simultaneous",
                "userdata",
                "userdata",
                "window",
                "interject",
                "interject",
                "multicast",
            ]
        ),
        st.integers(0, CLIENTS - 1),
        st.integers(0, 7),
        st.integers(0, 100),
    ),
    min_size=10,
    max_size=80,
)


@pytest.fixture(autouse=True)
def phase_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    for kind, handler in PHASE_HANDLERS.items():
        monkeypatch.setitem(service.HANDLERS, kind, handler)


def _in_phase(h: Harness, phase: str) -> list[AsyncGame]:
    return [g for g in h.service.hub.games.values() if g.status == "RUNNING" and g.phase == phase]


def _game(h: Harness, pick: int) -> int:
    games = sorted(h.service.hub.games)
    return games[pick % len(games)] if games else 1


def _act(h: Harness, conns: list[int], ids: list[int], step: Step) -> None:
    kind, who, pick, number = step
    conn = conns[who]
    waiting = sorted(g.id for g in h.service.hub.games.values() if g.status == "NOT_STARTED")
    if kind in ("join", "leave", "start", "answer") and waiting and pick % 4 != 3:
        game_id = waiting[number % len(waiting)]  # mostly a game these requests can apply to
    else:
        game_id = _game(h, pick)
    game = h.service.hub.games.get(game_id)
    seats = len(game.seats) if game else 2
    if kind == "create":
        config: dict[str, Any] = {"game_type": "prop", "max_players": 2 + pick % 3, "min_players": 2}
        if number % 3 == 0:
            config["clock_seconds"] = 30 + number
        if number % 4 == 0:
            config["idle_time"] = 20
        h.send(conn, type="LobbyCreateGameRequest", configuration=config, initial_state="s")
    elif kind == "join":
        h.send(conn, type="LobbyJoinGameRequest", game_id=game_id)
    elif kind == "leave":
        h.send(conn, type="LobbyLeaveGameRequest", game_id=game_id)
    elif kind == "start":
        h.send(conn, type="LobbyStartGameRequest", game_id=game_id)
    elif kind in ("commit", "robot", "stale", "simultaneous", "window"):
        running = [g for g in h.service.hub.games.values() if g.status == "RUNNING" and g.turn is not None]
        if running and pick % 4 != 3:  # mostly a running game, often by the one who must act
            game = running[number % len(running)]
            game_id, seats = game.id, len(game.seats)
            actor = game.seats[(game.delegate or game.turn or 1) - 1].player_id
            if pick % 2 == 0 and actor in ids:
                conn = conns[ids.index(actor)]
        index = max(1, game.turn_index if game else 1)
        message: dict[str, Any] = {
            "type": "CommitActionRequest",
            "game_id": game_id,
            "next_state": f"state {number}",
            "next_players": [1 + (number + offset) % (seats + (kind == "stale")) for offset in range(2)],
            "turn_index": index - 1 if kind == "stale" and index > 1 else index,
            "broadcast": number % 2 == 0,
        }
        if kind == "robot" and game is not None and game.turn is not None:
            message["player_id"] = game.turn
        if number % 5 == 0:
            message["pause_time"] = 2
        others = [1 + (number + offset) % (seats + (pick == 7)) for offset in range(1 + pick % seats)]
        if kind == "simultaneous":
            message["next_simultaneous"] = True
            message["simultaneous_players"] = others  # a duplicate or a stranger now and then
            if number % 3 == 0:
                del message["next_players"]
        elif kind == "window":
            message["interruption_window_duration"] = 1000 + 100 * number
            turn = game.turn if game is not None else None
            # Mostly valid: the committing seat may not interrupt its own action.
            valid = [local for local in others if local != turn and local <= seats] if pick != 7 else []
            message["interruption_players"] = valid or others
        h.send(conn, **message)
    elif kind == "userdata":
        waiting = _in_phase(h, "SIMULTANEOUS")
        if waiting and pick % 4 != 3:
            game = waiting[number % len(waiting)]
            game_id = game.id
            entry = game.simultaneous[pick % len(game.simultaneous)]
            seat = game.seats[(entry.delegate or entry.local_id) - 1]
            if pick % 2 == 0 and seat.player_id in ids:
                conn = conns[ids.index(seat.player_id)]
            update: dict[str, Any] = {"user_data": f"data {number}", "broadcast": number % 2 == 0}
            if entry.delegate is not None or pick % 3 == 0:
                update["player_id"] = entry.local_id
            if number % 4 == 0:
                update["turn_index"] = game.turn_index
            h.send(conn, type="UpdateUserDataRequest", game_id=game_id, **update)
        else:
            h.send(conn, type="UpdateUserDataRequest", game_id=game_id, user_data="stray")
    elif kind == "interject":
        open_windows = _in_phase(h, "INTERRUPTION")
        game = open_windows[number % len(open_windows)] if open_windows else game
        if game is not None:
            waiting = [
                game.seats[local - 1].player_id for local in game.interrupters if local not in game.answered
            ]
            if waiting and pick % 3 != 2 and waiting[number % len(waiting)] in ids:
                conn = conns[ids.index(waiting[number % len(waiting)])]  # mostly an interrupter
            h.send(
                conn,
                type="InterruptActionRequest",
                game_id=game.id,
                turn_index=max(1, game.turn_index - (pick == 7)),
                turn=game.turn or 1,
                interruption_data=f"stop {number}",
                no_more_interruption=number % 3 == 0,
            )
    elif kind == "multicast":
        recipients = [1 + offset % seats for offset in range(pick % 3)]
        h.send(
            conn, type="MulticastDataRequest", game_id=game_id, data=f"m {number}", recipient_ids=recipients
        )
    elif kind == "forfeit":
        h.send(conn, type="GameForfeitRequest", game_id=game_id)
    elif kind == "over":
        scores = {str(local): [local, 1 + (local + number) % seats] for local in range(1, seats + 1)}
        h.send(conn, type="GameOverRequest", game_id=game_id, finalScores=scores, is_ranked=number % 2 == 0)
    elif kind == "confirm":
        kind_name = "GameOutcomeConfirmationRequest" if number % 2 else "GameAbortedConfirmationRequest"
        h.send(conn, type=kind_name, game_id=game_id)
    elif kind == "invite":
        friends = [ids[(who + 1 + pick) % CLIENTS]] + ([0] if number % 2 else [])
        h.send(conn, type="EngageGameWithFriendsRequest", friend_ids=friends)
    elif kind == "answer":
        h.send(conn, type="AnswerInvitationRequest", game_id=game_id, accept=number % 4 != 0)
    elif kind == "whatsnew":
        h.send(conn, type="WhatsNewPussycatRequest")
    elif kind == "wait":
        h.advance(number / 2)
    elif kind == "reconnect":
        h.drop(conn)
        conns[who] = h.connect()
        token, _ = h.service.tokens.issue(ids[who], f"p{who}", h.now)
        h.send(conns[who], type="AsyncAuthRequest", name=f"p{who}", sessionToken=token)


def _check(h: Harness, acked: dict[int, int]) -> None:
    for box in h.inbox.values():
        while box:
            message = box.popleft()
            if message["type"] == "ActionCommitedRequest":
                game_id, index = message["game_id"], message["turn_index"]
                assert index > acked.get(game_id, 0), "turn indexes only go up"
                acked[game_id] = index
                assert (game_id, index - 1) in h.turns, "an acknowledged commit is stored"
            assert message["type"] != "ErrorRequest" or message["code"] != "INTERNAL_ERROR"
    for game_id, game in h.service.hub.games.items():
        stored = h.games.get(game_id)
        assert stored is not None and decode_game(stored.doc) == game, "the store holds the live game"
        if game.status == "RUNNING" and game.phase == "SIMULTANEOUS":
            # Waiting for data: a turn where every seat answered has become its merge.
            assert game.turn is None and game.pending() and not game.user_data
            for entry in game.pending():
                assert entry.delegate is None or game.seats[entry.delegate - 1].human_active
        elif game.status == "RUNNING":
            assert game.turn is not None and 1 <= game.turn <= len(game.seats)
            assert game.delegate is None or game.seats[game.delegate - 1].human_active
            if game.phase == "INTERRUPTION":
                assert game.window > 0 and game.interrupters and game.user_data is None
                assert game.turn not in game.interrupters
            else:
                assert not game.simultaneous and not game.interrupters
                assert game.user_data is None or game.interruption_data is None
        else:
            assert game.turn is None or game.status == "NOT_STARTED"
            assert game.phase == "TURN" and game.user_data is None and game.interruption_data is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_random_interleavings_keep_the_invariants(plan: list[Step]) -> None:
    h = Harness()
    conns, ids = [], []
    for number in range(CLIENTS):
        conn, account_id = h.player(f"p{number}")
        conns.append(conn)
        ids.append(account_id)
    # Two games already running, so that turns, simultaneous turns and windows get played.
    h.open_game(conns[0], conns[1], conns[2], clock_seconds=90, idle_time=30)
    h.open_game(conns[3], conns[0])
    acked: dict[int, int] = {}
    for step in plan:
        _act(h, conns, ids, step)
        _check(h, acked)
    restarted = h.restart(downtime=60)
    for game_id, game in h.service.hub.games.items():
        if game.status not in ("OVER", "ABORTED"):
            again = restarted.service.hub.games[game_id]
            assert (again.turn_index, again.turn, again.state) == (game.turn_index, game.turn, game.state)
            assert (again.phase, again.simultaneous, again.interruptions, again.user_data) == (
                game.phase,
                game.simultaneous,
                game.interruptions,
                game.user_data,
            )
