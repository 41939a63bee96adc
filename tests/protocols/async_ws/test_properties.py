"""Random interleavings of requests from 4 clients never break the /async invariants:
one seat to play per running game, turn indexes that only go up, no acknowledged commit missing
from the store, and the stored game always equal to the live one."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parlour.protocols.async_ws.model import decode_game
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
            ]
        ),
        st.integers(0, CLIENTS - 1),
        st.integers(0, 7),
        st.integers(0, 100),
    ),
    min_size=10,
    max_size=80,
)


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
    elif kind in ("commit", "robot", "stale"):
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
        h.send(conn, **message)
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
        if game.status == "RUNNING":
            assert game.turn is not None and 1 <= game.turn <= len(game.seats)
            assert game.delegate is None or game.seats[game.delegate - 1].human_active
        else:
            assert game.turn is None or game.status == "NOT_STARTED"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_random_interleavings_keep_the_invariants(plan: list[Step]) -> None:
    h = Harness()
    conns, ids = [], []
    for number in range(CLIENTS):
        conn, account_id = h.player(f"p{number}")
        conns.append(conn)
        ids.append(account_id)
    acked: dict[int, int] = {}
    for step in plan:
        _act(h, conns, ids, step)
        _check(h, acked)
    restarted = h.restart(downtime=60)
    for game_id, game in h.service.hub.games.items():
        if game.status not in ("OVER", "ABORTED"):
            again = restarted.service.hub.games[game_id]
            assert (again.turn_index, again.turn, again.state) == (game.turn_index, game.turn, game.state)
