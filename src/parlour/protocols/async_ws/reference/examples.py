"""One sequence example per workflow, produced by the real service (not written by hand).

Each workflow of the Scalable Server text is played here against ``AsyncService`` on a fixed
clock, and the messages that went each way are rendered for docs/async-protocol.md. The examples
are therefore what the server does, and the document's staleness test notices any change.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial
from random import Random
from typing import Any, Final

import msgspec

from parlour.accounts.tokens import SessionTokens
from parlour.core.effects import Broadcast, Close, Effect, Send
from parlour.core.ids import IdSource
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.async_ws.state.hub import AsyncLimits

__all__ = ["EXAMPLES", "render"]

#: Messages the examples do not show (they arrive on their own in the lobby and add nothing).
_QUIET: Final = frozenset({"LobbyPlayerListRequest", "LobbyGameListRequest"})
_START: Final = 1_767_225_600.0  # 2026-01-01T00:00:00Z
#: Longer states (the JSON views of server rules) are cut here in the transcripts.
_STATE_SHOWN: Final = 160


class _Scene:
    """Named players on one service, and the transcript of what they exchanged."""

    def __init__(self) -> None:
        self.now = _START
        tokens = SessionTokens(b"example-secret-of-32-bytes-long!", 30 * 86400.0)
        # A seeded id source: the documented examples are the same at every build.
        self.service = AsyncService(tokens, AsyncLimits(), Random(7), ids=IdSource(7))
        self.lines: list[str] = []
        self.conns: dict[str, int] = {}
        self.names: dict[int, str] = {}
        self.tokens: dict[str, str] = {}
        self._ids = itertools.count(1)

    def _run(self, effects: list[Effect]) -> None:
        for effect in effects:
            if isinstance(effect, Broadcast):
                self._run(list[Effect](effect.sends()))
            elif isinstance(effect, Send):
                message = msgspec.json.decode(effect.data)
                if message["type"] not in _QUIET:
                    self.lines.append(f"S -> {self.names[effect.conn]}: {self._show(message)}")
            elif isinstance(effect, Close):
                self.lines.append(f"S -> {self.names[effect.conn]}: (closes the websocket: {effect.code})")

    def _show(self, message: dict[str, Any]) -> str:
        if "session" in message:  # derived from the token, which differs on every run
            message = {**message, "session": "<session id>"}
        if len(message.get("state", "")) > _STATE_SHOWN:  # a server-rules view: its start will do
            message = {**message, "state": message["state"][:_STATE_SHOWN] + "..."}
        report = message.get("status_report")
        if report and len(report.get("state", "")) > _STATE_SHOWN:
            message = {
                **message,
                "status_report": {**report, "state": report["state"][:_STATE_SHOWN] + "..."},
            }
        if len(message.get("legal_actions") or ()) > 4:
            actions = message["legal_actions"]
            message = {**message, "legal_actions": [*actions[:3], f"... {len(actions) - 3} more"]}
        text = msgspec.json.encode(message).decode()
        for name, token in self.tokens.items():
            text = text.replace(token, f"<{name}'s token>")
        return text

    def player(self, name: str, quiet: bool = True) -> None:
        """An account, connected and signed in (shown only when ``quiet`` is False)."""
        account, _ = self.service.create_account(name, "", self.now)
        assert account is not None
        self.tokens[name] = self.service.tokens.issue(account.id, name, self.now)[0]
        conn = next(self._ids)
        self.conns[name], self.names[conn] = conn, name
        self._run(self.service.connected(conn, self.now))
        if quiet:
            mark = len(self.lines)
            self.send(name, type="AsyncAuthRequest", name=name, sessionToken=self.tokens[name])
            del self.lines[mark:]

    def send(self, who: str, /, **message: Any) -> None:
        self.lines.append(f"{who} -> S: {self._show(message)}")
        text = msgspec.json.encode(message).decode()
        self._run(self.service.received(self.conns[who], text, self.now))

    def wait(self, seconds: float) -> None:
        self.lines.append(f"... {seconds:g} s later ...")
        self.now += seconds
        self._run(self.service.tick(self.now))

    def note(self, text: str) -> None:
        self.lines.append(f"# {text}")

    def quietly(self, work: Callable[[], None]) -> None:
        mark = len(self.lines)
        work()
        del self.lines[mark:]


def _seated(scene: _Scene, *names: str, **config: Any) -> None:
    """These players in a started game of their number, the first one its creator (not shown)."""
    for name in names:
        scene.player(name)

    def setup() -> None:
        configuration = {"game_type": "example", "max_players": len(names), **config}
        scene.send(names[0], type="LobbyCreateGameRequest", configuration=configuration, initial_state="s0")
        for name in names[1:]:
            scene.send(name, type="LobbyJoinGameRequest", game_id=1)

    scene.quietly(setup)


def _two(scene: _Scene, **config: Any) -> None:
    """ann and bob in a started 2-player game (not shown)."""
    _seated(scene, "ann", "bob", **config)


def authentication(scene: _Scene) -> None:
    scene.player("ann", quiet=False)
    scene.note("POST /api/sessions {name, password} returned ann's token")
    scene.send("ann", type="AsyncAuthRequest", name="ann", sessionToken="not-a-token", request_id="a1")
    scene.send("ann", type="AsyncAuthRequest", name="ann", sessionToken=scene.tokens["ann"], request_id="a2")
    scene.send("ann", type="PingRequest", timestamp=1767225600123)
    scene.send("ann", type="AsyncDisconnectRequest")
    scene.send("ann", type="EnterLobbyRequest")


def lobby(scene: _Scene) -> None:
    scene.player("ann")
    scene.player("bob")
    scene.player("cid")
    scene.send("ann", type="EnterLobbyRequest")
    scene.send("ann", type="EnterLobbyRequest")
    scene.send(
        "ann",
        type="LobbyCreateGameRequest",
        configuration={
            "game_type": "example",
            "min_players": 2,
            "max_players": 3,
            "private": True,
            "password": "pw",
        },
        request_id="c1",
    )
    scene.send("bob", type="LobbyJoinGameRequest", game_id=1, password="wrong")
    scene.send("bob", type="LobbyJoinGameRequest", game_id=1, password="pw")
    scene.send("bob", type="LobbyStartGameRequest", game_id=1)
    scene.send("ann", type="LobbyStartGameRequest", game_id=1)
    scene.send("cid", type="LobbyJoinGameRequest", game_id=1, password="pw")


def leaving(scene: _Scene) -> None:
    scene.player("ann")
    scene.player("bob")
    scene.send("ann", type="LobbyCreateGameRequest", configuration={"game_type": "example", "max_players": 3})
    scene.send("bob", type="LobbyJoinGameRequest", game_id=1)
    scene.send("bob", type="LobbyLeaveGameRequest", game_id=1)
    scene.send("bob", type="LobbyJoinGameRequest", game_id=1)
    scene.send("ann", type="LobbyLeaveGameRequest", game_id=1)


def invitation(scene: _Scene) -> None:
    scene.player("ann")
    scene.player("bob")
    scene.player("cid")
    scene.send("ann", type="EngageGameWithFriendsRequest", friend_ids=[2, 0])
    scene.send("bob", type="AnswerInvitationRequest", game_id=1, accept=True)
    scene.note("a second invitation, declined")
    scene.send("ann", type="EngageGameWithFriendsRequest", friend_ids=[3])
    scene.send("cid", type="AnswerInvitationRequest", game_id=2, accept=False)


def turns(scene: _Scene) -> None:
    _seated(scene, "ann", "bob", "cid")
    scene.send(
        "ann", type="CommitActionRequest", game_id=1, turn_index=1, next_state="A", next_players=[2, 3, 1]
    )
    scene.send(
        "bob",
        type="CommitActionRequest",
        game_id=1,
        turn_index=2,
        next_state="B",
        next_players=[3, 1, 2],
        broadcast=True,
    )
    scene.send("ann", type="CommitActionRequest", game_id=1, turn_index=3, next_state="X", next_players=[1])
    scene.send(
        "cid", type="CommitActionRequest", game_id=1, turn_index=2, next_state="C", next_players=[3, 2, 1]
    )
    scene.send(
        "cid", type="CommitActionRequest", game_id=1, turn_index=3, next_state="C", next_players=[3, 2, 1]
    )
    scene.send("cid", type="WhatsNewPussycatRequest", game_id=1)


def clocks(scene: _Scene) -> None:
    _two(scene, clock_seconds=300, clock_increment_seconds=10)
    scene.wait(20)
    scene.send(
        "ann", type="CommitActionRequest", game_id=1, next_state="A", next_players=[2, 1], pause_time=3
    )
    scene.wait(3)
    scene.send("bob", type="GetClocksRequest", game_id=1)


def idle_timer(scene: _Scene) -> None:
    _two(scene, idle_time=40)
    scene.wait(20)
    scene.wait(10)
    scene.wait(10)
    scene.send("bob", type="CommitActionRequest", game_id=1, player_id=1, next_state="R", next_players=[2, 1])
    scene.send("ann", type="CommitActionRequest", game_id=1, next_state="late", next_players=[2, 1])


def forfeit_and_robots(scene: _Scene) -> None:
    _seated(scene, "ann", "bob", "cid")
    scene.send("bob", type="GameForfeitRequest", game_id=1)
    scene.send(
        "ann", type="CommitActionRequest", game_id=1, turn_index=1, next_state="A", next_players=[2, 3, 1]
    )
    scene.send(
        "ann",
        type="CommitActionRequest",
        game_id=1,
        turn_index=2,
        player_id=2,
        next_state="B",
        next_players=[3, 1, 2],
    )


def clock_exhausted(scene: _Scene) -> None:
    _two(scene, clock_seconds=60)
    scene.wait(60)


def game_over(scene: _Scene) -> None:
    _two(scene, ranked=True)
    scene.send("ann", type="CommitActionRequest", game_id=1, next_state="A", next_players=[2, 1])
    scene.send("ann", type="GameOverRequest", game_id=1, finalScores={"1": [12, 2], "2": [23, 1]})
    scene.send("ann", type="GameOutcomeConfirmationRequest", game_id=1)
    scene.send("bob", type="GameOutcomeConfirmationRequest", game_id=1)


def abort(scene: _Scene) -> None:
    _two(scene)
    scene.send("ann", type="GameForfeitRequest", game_id=1)
    scene.send("bob", type="GameForfeitRequest", game_id=1)
    scene.send("ann", type="GameAbortedConfirmationRequest", game_id=1)
    scene.send("bob", type="GameAbortedConfirmationRequest", game_id=1)


def server_rules(scene: _Scene) -> None:
    scene.player("ann")
    scene.player("bob")
    configuration = {"game_type": "fish", "rules": "fish", "max_players": 2}
    scene.send("ann", type="LobbyCreateGameRequest", configuration=configuration)
    scene.send("bob", type="LobbyJoinGameRequest", game_id=1)
    game = scene.service.hub.games[1]
    found = scene.service.games.game(1)
    assert found is not None and found.rules is not None
    first = found.rules.legal_actions(game.turn or 1)[0]
    scene.send("ann", type="CommitActionRequest", game_id=1, turn_index=1, action="place 99,99")
    scene.send("ann", type="CommitActionRequest", game_id=1, turn_index=1, action=first)


def chat(scene: _Scene) -> None:
    for name in ("ann", "bob", "cid"):
        scene.player(name)
        scene.quietly(partial(scene.send, name, type="EnterLobbyRequest"))
    scene.send("ann", type="MulticastChatRequest", text="hello all")
    scene.send("ann", type="MulticastChatRequest", text="the password is pw", recipient_ids=[2])
    scene.send("bob", type="MulticastChatRequest", text="/help")
    scene.send("cid", type="GetChatHistoryRequest")


def buddies_and_presence(scene: _Scene) -> None:
    scene.player("ann")
    scene.player("bob")
    scene.send("ann", type="AsyncBuddyManagementRequest", operation="ADD", player_id=2)
    scene.send("ann", type="RegisterPresenceRequest", player_ids=[2])
    scene.send("ann", type="SubscribePresenceServiceRequest", subscribe=True)
    scene.send("bob", type="AsyncDisconnectRequest")
    scene.wait(1)
    scene.send("ann", type="AsyncBuddyListRequest")
    scene.send("ann", type="AsyncIgnoreManagementRequest", operation="ADD", player_id=2)
    scene.send("ann", type="AskServerStatisticsRequest")


def observing(scene: _Scene) -> None:
    _two(scene)
    scene.player("eve")
    scene.send("eve", type="EnterLobbyRequest")
    scene.send("eve", type="SubscribeToObservableGameListRequest", subscribe=True)
    scene.send("eve", type="StartObserveGameRequest", game_id=1)
    scene.send(
        "ann", type="CommitActionRequest", game_id=1, next_state="A", next_players=[2, 1], broadcast=True
    )
    scene.send("eve", type="StopObserveGameRequest", game_id=1)


def simultaneous(scene: _Scene) -> None:
    _two(scene)
    scene.send(
        "ann",
        type="CommitActionRequest",
        game_id=1,
        next_state="toto",
        next_players=[1, 2],
        next_simultaneous=True,
        simultaneous_players=[1, 2],
    )
    scene.send("ann", type="UpdateUserDataRequest", game_id=1, user_data="a")
    scene.send("bob", type="UpdateUserDataRequest", game_id=1, user_data="b", broadcast=True)
    scene.send("ann", type="CommitActionRequest", game_id=1, next_state="abfoobar", next_players=[2, 1])


def interruptions(scene: _Scene) -> None:
    _two(scene)
    scene.send(
        "ann",
        type="CommitActionRequest",
        game_id=1,
        next_state="A",
        next_players=[2, 1],
        interruption_window_duration=3000,
        interruption_players=[2],
    )
    scene.send(
        "bob",
        type="InterruptActionRequest",
        game_id=1,
        turn_index=2,
        turn=1,
        interruption_data="Not this time",
    )
    scene.wait(3)


def multicast(scene: _Scene) -> None:
    _two(scene)
    scene.send("ann", type="MulticastDataRequest", game_id=1, data="refresh")


#: (title, the scene).
def quick_play(scene: _Scene) -> None:
    for name in ("ann", "bob", "cid"):
        scene.player(name)
    scene.send("ann", type="QuickPlayJoinRequest", game_type="fish", seats=2, request_id="q1")
    scene.send("ann", type="QuickPlayJoinRequest", game_type="apologies", seats=2, request_id="q2")
    scene.send("ann", type="QuickPlayJoinRequest", game_type="fish", seats=2, request_id="q3")
    scene.wait(5)
    scene.note("bob's rating is ann's (new players: 25); the match ends ann's other queue")
    scene.send("bob", type="QuickPlayJoinRequest", game_type="fish", seats=2)
    scene.send("ann", type="QuickPlayLeaveRequest", request_id="l1")
    scene.send("cid", type="QuickPlayJoinRequest", game_type="tsuro", seats=3, robots_after=10)
    scene.wait(10)


EXAMPLES: Final[list[tuple[str, Callable[[_Scene], None]]]] = [
    ("Authentication, heartbeat, logging out", authentication),
    ("Lobby: entering, creating, joining, starting early", lobby),
    ("Lobby: leaving an open game (the creator leaving aborts it)", leaving),
    ("Invitation: accepted, then declined", invitation),
    ("Standard game turn, broadcast and commit errors", turns),
    ("Player clocks and a pause after commit", clocks),
    ("Idle timer", idle_timer),
    ("Forfeit and robots (hot-swap)", forfeit_and_robots),
    ("Player timeout (clock exhausted)", clock_exhausted),
    ("Game over", game_over),
    ("Abort", abort),
    ("Server rules (S9): a Fish game computed by Parlour", server_rules),
    ("Chat: lobby, private, a command, history", chat),
    ("Buddy and ignore lists, presence, statistics", buddies_and_presence),
    ("Observing a game", observing),
    ("Simultaneous turn", simultaneous),
    ("Interruptions", interruptions),
    ("Multicast", multicast),
    ("Quick play (Parlour extension): queues, a match, robots after a wait", quick_play),
]


def render() -> str:
    """The examples as Markdown: one fenced transcript per workflow."""
    parts = [
        "## Sequence examples\n",
        "Each transcript below was produced by the server itself (`examples.py`), on a fixed clock;",
        "`X -> S` is a request from X, `S -> X` a message to X. Lobby lists pushed on their own are",
        "left out, and tokens are shown as placeholders.\n",
    ]
    for title, play in EXAMPLES:
        scene = _Scene()
        play(scene)
        parts.append(f"### {title}\n")
        parts.append("```text")
        parts.extend(scene.lines)
        parts.append("```\n")
    return "\n".join(parts)
