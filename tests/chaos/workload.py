"""The clients of a chaos run: players spread over the nodes who play many games at once on
server rules (Fish, Tsuro, Apologies; 2 to 4 seats, some with robots), chat in their games and
the lobby, queue for quick play, watch others' games, sign out and back in; and a director that
keeps games being made. Every frame sent and received is recorded (history.py).

A player behaves as a careful real client does: it commits only what the server prompted it
for (one of the prompt's ``legal_actions``), sends a refused commit again while the prompt
stands, signs in again on any node when its connection is closed, and asks
``WhatsNewPussycatRequest`` when it waits long for a turn it thinks is its own. Its choices come
from a random source seeded from the run's seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from tests.chaos.history import History, trim

__all__ = ["GAME_KINDS", "Agent", "Director"]

#: What is played: (game type, seat counts); Apologies games are long, so fewer of them.
GAME_KINDS: list[tuple[str, list[int], int]] = [
    ("fish", [2, 3, 4], 5),
    ("tsuro", [3, 4], 3),
    ("apologies", [2, 3], 1),
]
#: How long a request may go unanswered on an open connection before the client gives up on
#: that connection (the checker counts it): far more than any answer should take.
GIVE_UP = 15.0
#: How long a sign-in may go unanswered.
SIGN_IN = 5.0
#: How long a player waits for the prompt of a turn the server reports as its own.
STALE_PROMPT = 6.0

_ids = itertools.count(1)


def rid(prefix: str) -> str:
    return f"{prefix}{next(_ids)}"


@dataclass
class Pending:
    kind: str
    sent: float
    message: dict[str, Any]
    #: The player's live games as it was sent (a report answers for those it knew of).
    live: frozenset[int] = frozenset()


@dataclass
class Agent:
    """One player: an account, a connection at a time, its games."""

    name: str
    player_id: int
    token: str
    home: int
    rng: random.Random
    history: History
    ports: Callable[[], dict[int, int]]
    #: What the player does besides playing (off once the faults are over).
    busy: bool = True
    ws: ClientConnection | None = None
    node: int = 0
    conn: int = 0
    signed_in: bool = False
    #: The last sign-in was answered with a refusal.
    refused: bool = False
    seats: dict[int, int] = field(default_factory=dict)
    live: set[int] = field(default_factory=set)
    #: Games known to have started (a prompt, or a report of one running).
    started: set[int] = field(default_factory=set)
    ended: set[int] = field(default_factory=set)
    #: game id -> (turn index, legal actions) of the prompt for this player's seat.
    prompts: dict[int, tuple[int, list[str]]] = field(default_factory=dict)
    pending: dict[str, Pending] = field(default_factory=dict)
    answered_invitations: set[int] = field(default_factory=set)
    observing: set[int] = field(default_factory=set)
    in_lobby: bool = False
    queued: bool = False
    #: game id -> when the server reported it waits for this player without a prompt here.
    stale: dict[int, float] = field(default_factory=dict)
    #: Games known to run, for others to watch (shared by every agent).
    watchable: set[int] = field(default_factory=set)
    #: Games asked about once the faults are over, until one answer that is not TRY_AGAIN.
    probing: dict[int, float] = field(default_factory=dict)
    #: What the messages received call for, sent at the player's next step.
    replies: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    _reader: asyncio.Task[None] | None = None
    _last_report: float = 0.0
    _retry_at: dict[int, float] = field(default_factory=dict)

    # -- Connection -----------------------------------------------------------------------------

    async def sign_in(self) -> bool:
        """Connect to a node (home first, then the others) and sign in with the token."""
        ports = self.ports()
        order = sorted(ports, key=lambda node: (node != self.home, self.rng.random()))
        for node in order:
            self.conn += 1
            conn = self.conn
            try:
                ws = await connect(
                    f"ws://127.0.0.1:{ports[node]}/async", open_timeout=3, close_timeout=1, max_size=2**24
                )
            except (OSError, InvalidHandshake, TimeoutError) as error:
                self.history.add("fail", self.name, conn, node, what="connect", error=type(error).__name__)
                continue
            self.ws, self.node, self.signed_in = ws, node, False
            self.history.add("open", self.name, conn, node)
            self._reader = asyncio.ensure_future(self._read(ws, conn, node))
            request = {
                "type": "AsyncAuthRequest",
                "name": self.name,
                "sessionToken": self.token,
                "request_id": rid("auth"),
            }
            if not await self._send(request, "auth"):
                continue
            deadline = asyncio.get_running_loop().time() + SIGN_IN
            self.refused = False
            while (
                not self.signed_in
                and not self.refused
                and self.ws is ws
                and asyncio.get_running_loop().time() < deadline
            ):
                await asyncio.sleep(0.02)
            if self.signed_in and self.ws is ws:
                self.in_lobby = self.queued = False
                self.observing.clear()
                return True
            if self.ws is ws:
                if not self.refused:
                    self.history.add("note", self.name, conn, node, what="sign-in unanswered")
                await self.close()
        return False

    async def close(self) -> None:
        ws = self.ws
        self.ws = None
        self.signed_in = False
        if ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ws.close(), 2)
        if self._reader is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._reader, 2)

    async def _read(self, ws: ClientConnection, conn: int, node: int) -> None:
        try:
            async for frame in ws:
                try:
                    message = json.loads(frame)
                except ValueError:
                    self.history.add("recv", self.name, conn, node, bad=str(frame)[:200])
                    continue
                self.history.add("recv", self.name, conn, node, m=trim(message))
                try:
                    self._handle(message)
                except Exception as error:  # the checker sees it as a note; the client goes on
                    self.history.add("note", self.name, conn, node, what="client error", error=repr(error))
        except ConnectionClosed:
            pass
        finally:
            code = ws.close_code
            self.history.add("close", self.name, conn, node, code=code)
            if self.ws is ws:
                self.ws = None
                self.signed_in = False
            # What was asked on this connection has no answer: its outcome is unknown.
            self.pending.clear()
            self.prompts.clear()
            self.replies.clear()
            self.stale.clear()

    async def _send(self, message: dict[str, Any], kind: str) -> bool:
        ws = self.ws
        if ws is None:
            return False
        self.history.add("send", self.name, self.conn, self.node, m=message)
        if "request_id" in message:
            self.pending[message["request_id"]] = Pending(
                kind, self.history.now(), message, frozenset(self.live)
            )
        try:
            await ws.send(json.dumps(message))
            return True
        except ConnectionClosed:
            return False

    # -- What arrives ---------------------------------------------------------------------------

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        answered = message.get("request_id")
        request = self.pending.pop(answered, None) if answered else None
        game_id: int = message.get("game_id") or 0
        if kind == "AsyncConnectedRequest":
            self.signed_in = True
        elif kind == "AsyncConnectionErrorRequest" or (request is not None and request.kind == "auth"):
            self.refused = True  # answered, not signed in (the store away, say): try again
        elif kind == "ActionRequiredRequest":
            if self.seats.get(game_id) == message.get("player_id"):
                self.prompts[game_id] = (message["turn_index"], list(message.get("legal_actions") or []))
                self.stale.pop(game_id, None)
                self.live.add(game_id)
                self.started.add(game_id)
        elif kind == "GameCreatedRequest":
            self.in_lobby = False  # a game that starts takes its players out of the lobby
            self._learn(message["status_report"])
        elif kind == "GameStatusReportRequest":
            reports = message.get("status_reports", [])
            for report in reports:
                self._learn(report)
            if request is not None and request.kind == "whatsnew":
                # Every game of the player's that is not over: one that ended while the player
                # was away (its outcome sent to nobody) is not among them. Only those known as
                # it was sent: a game that started since may have been created after the report
                # was made (its answer and the game's start come by different ways).
                reported = {report["game_id"] for report in reports}
                for game_id in (self.live & request.live) - reported:
                    self._over(game_id, "")
        elif kind == "GameOutcomeRequest":
            self._over(game_id, "GameOutcomeConfirmationRequest")
        elif kind == "GameAbortedRequest":
            self._over(game_id, "GameAbortedConfirmationRequest")
        elif kind == "QuickPlayMatchedRequest" or (kind == "QuickPlayStatusRequest" and message.get("ended")):
            self.queued = False
        if request is not None and request.kind == "probe":
            game = request.message["game_id"]
            final = kind != "ErrorRequest" or message.get("code") != "TRY_AGAIN"
            if final and self.probing.pop(game, None) is not None:
                self.history.add("note", self.name, self.conn, self.node, what="probe answered", game_id=game)
        if kind == "ErrorRequest" and request is not None:
            code = message.get("code")
            if request.kind == "commit":
                game = request.message["game_id"]
                if code in ("TRY_AGAIN", "INTERNAL_ERROR", "RATE_LIMITED"):
                    # Nothing changed: the prompt stands; send it again in a moment.
                    self.prompts.setdefault(
                        game, (request.message["turn_index"], [request.message["action"]])
                    )
                    self._retry_at[game] = self.history.now() + 0.5
                elif code in ("UNKNOWN_GAME", "YOU_FORFEITED", "YOU_LEFT", "YOU_RAN_OUT_OF_TIME"):
                    self.live.discard(game)
            elif request.kind == "quickplay":
                self.queued = False
            elif request.kind == "chat" and code == "BAD_REQUEST":
                self.in_lobby = False
        elif kind == "LobbyEnteredRequest":
            self.in_lobby = True
        elif kind == "LobbyExitedRequest":
            self.in_lobby = False

    def _learn(self, report: dict[str, Any]) -> None:
        game_id = report["game_id"]
        for seat in report.get("players", []):
            if seat.get("player_id") == self.player_id:
                self.seats[game_id] = seat["local_id"]
        if game_id not in self.seats:
            return  # watched, not played
        status = report.get("status")
        if status in ("OUTCOME", "OVER", "ABORTED"):
            # Over (OUTCOME: its outcome waits for confirmations, this player's among them).
            if game_id not in self.ended:
                self._over(game_id, "GameOutcomeConfirmationRequest" if status == "OUTCOME" else "")
            return
        if game_id in self.ended:
            return
        self.live.add(game_id)
        if status in ("RUNNING", "ABORTING"):
            self.started.add(game_id)
        if status == "RUNNING":
            self.watchable.add(game_id)
        invited_by = report.get("invited_by")
        if (
            status == "NOT_STARTED"
            and self.busy  # after the faults, no game starts: those started are played out
            and invited_by not in (None, self.player_id)
            and game_id not in self.answered_invitations
        ):
            self.answered_invitations.add(game_id)
            answer = {
                "type": "AnswerInvitationRequest",
                "game_id": game_id,
                "accept": True,
                "request_id": rid("inv"),
            }
            self.replies.append((answer, "answer"))
        if (
            status == "RUNNING"
            and report.get("active_player") == self.seats[game_id]
            and game_id not in self.prompts
            and not any(p.kind == "commit" and p.message["game_id"] == game_id for p in self.pending.values())
        ):
            self.stale.setdefault(game_id, self.history.now())

    @property
    def playing(self) -> set[int]:
        """The live games known to have started: those the run plays to their end (a game whose
        invitations are still open waits for nobody once the faults are over)."""
        return self.live & self.started

    def _over(self, game_id: int, confirmation: str) -> None:
        self.live.discard(game_id)
        self.ended.add(game_id)
        self.prompts.pop(game_id, None)
        self.watchable.discard(game_id)
        if game_id in self.seats and confirmation:
            # The confirmation has no direct reply: sent without a request id, nothing waits on it.
            self.replies.append(({"type": confirmation, "game_id": game_id}, "confirm"))

    # -- What the player does -------------------------------------------------------------------

    async def step(self, others: list[Agent]) -> None:
        """One round of this player's life."""
        if self.ws is None:
            await self.sign_in()
            return
        if not self.signed_in:
            return
        replies, self.replies = self.replies, []
        for message, kind in replies:
            await self._send(message, kind)
        now = self.history.now()
        # A request left unanswered on an open connection: give up on the connection.
        for request_id, pending in list(self.pending.items()):
            if now - pending.sent > GIVE_UP:
                self.history.add(
                    "note", self.name, self.conn, self.node, what="unanswered", request_id=request_id
                )
                await self.close()
                return
        for game_id, (turn_index, legal) in list(self.prompts.items()):
            if self._retry_at.get(game_id, 0) > now or not legal:
                continue
            if any(p.kind == "commit" and p.message["game_id"] == game_id for p in self.pending.values()):
                continue
            if self.prompts.pop(game_id, None) is None:
                continue  # the game ended while an earlier commit was sent: nothing to play
            commit = {
                "type": "CommitActionRequest",
                "game_id": game_id,
                "turn_index": turn_index,
                "action": self.rng.choice(legal),
                "request_id": rid("c"),
            }
            await self._send(commit, "commit")
        for game_id, since in list(self.stale.items()):
            if game_id in self.prompts or game_id not in self.live:
                self.stale.pop(game_id, None)
            elif now - since > STALE_PROMPT:
                # The server says it waits for this player, who was never asked: sign in again.
                self.history.add("note", self.name, self.conn, self.node, what="no prompt", game_id=game_id)
                self.stale.clear()
                await self.close()
                return
        for game_id, asked in list(self.probing.items()):
            if now - asked >= 1.0 and not any(
                p.kind == "probe" and p.message["game_id"] == game_id for p in self.pending.values()
            ):
                self.probing[game_id] = now
                await self._send(
                    {"type": "WhatsNewPussycatRequest", "game_id": game_id, "request_id": rid("p")}, "probe"
                )
        if (self.live and now - self._last_report > 3.0) or (now - self._last_report > 10.0):
            self._last_report = now
            await self._send({"type": "WhatsNewPussycatRequest", "request_id": rid("w")}, "whatsnew")
        if self.busy:
            await self._extras(others)

    async def _extras(self, others: list[Agent]) -> None:
        """Chat, the lobby, watching, quick play, signing out: now and then."""
        roll = self.rng.random()
        if roll < 0.02 and self.live:
            game_id = self.rng.choice(sorted(self.live))
            text = f"{self.name} in {game_id} #{next(_ids)}"
            await self._send(
                {"type": "MulticastChatRequest", "game_id": game_id, "text": text, "request_id": rid("g")},
                "chat",
            )
        elif roll < 0.04:
            if not self.in_lobby:
                await self._send({"type": "EnterLobbyRequest", "request_id": rid("l")}, "lobby")
            else:
                text = f"{self.name} in the lobby #{next(_ids)}"
                await self._send(
                    {"type": "MulticastChatRequest", "game_id": 0, "text": text, "request_id": rid("g")},
                    "chat",
                )
        elif roll < 0.05:
            choices = sorted(self.watchable - set(self.seats) - self.observing)
            if choices:
                game_id = self.rng.choice(choices)
                self.observing.add(game_id)
                await self._send(
                    {"type": "StartObserveGameRequest", "game_id": game_id, "request_id": rid("o")}, "observe"
                )
        elif roll < 0.055 and self.observing:
            game_id = self.observing.pop()
            await self._send(
                {"type": "StopObserveGameRequest", "game_id": game_id, "request_id": rid("o")}, "observe"
            )
        elif roll < 0.06 and not self.queued and len(self.live) < 3:
            self.queued = True
            game_type, seats = self.rng.choice([("fish", 2), ("tsuro", 3)])
            join = {
                "type": "QuickPlayJoinRequest",
                "game_type": game_type,
                "seats": seats,
                "ranked": False,
                "robots_after": self.rng.choice([1, 2, 4]),
                "request_id": rid("q"),
            }
            await self._send(join, "quickplay")
        elif roll < 0.064:
            # Sign out (politely or not) and come back in a moment.
            if self.rng.random() < 0.5:
                await self._send({"type": "AsyncDisconnectRequest"}, "signout")
            await self.close()
            await asyncio.sleep(self.rng.uniform(0.2, 2.0))

    def probe(self) -> None:
        """Ask about each live game until it answers (the faults are over)."""
        for game_id in sorted(self.live):
            self.probing[game_id] = float("-inf")
            self.history.add("note", self.name, self.conn, self.node, what="probe", game_id=game_id)

    async def invite(self, friends: list[int], config: dict[str, Any]) -> None:
        message = {
            "type": "EngageGameWithFriendsRequest",
            "friend_ids": friends,
            "configuration": config,
            "request_id": rid("e"),
        }
        await self._send(message, "invite")


class Director:
    """Keeps about ``target`` games in play while the faults last: invitations from players who
    have few games to others who are signed in, some seats robots."""

    def __init__(
        self, agents: list[Agent], rng: random.Random, target: int, kinds: Sequence[str] | None = None
    ) -> None:
        self.agents = agents
        self.rng = rng
        self.target = target
        #: The game types it makes (GAME_KINDS'), all by default.
        self.kinds = [kind for kind in GAME_KINDS if kinds is None or kind[0] in kinds]
        self.active = True

    def live_games(self) -> set[int]:
        return set().union(*(agent.live for agent in self.agents))

    async def step(self) -> None:
        if not self.active or len(self.live_games()) >= self.target:
            return
        online = [agent for agent in self.agents if agent.signed_in and len(agent.live) < 4]
        if len(online) < 2:
            return
        kinds = [(kind, seats) for kind, seats, weight in self.kinds for _ in range(weight)]
        game_type, seat_counts = self.rng.choice(kinds)
        seats = self.rng.choice(seat_counts)
        creator = self.rng.choice(online)
        robots = self.rng.randint(0, seats - 2)
        humans = [agent for agent in online if agent is not creator]
        friends = [agent.player_id for agent in self.rng.sample(humans, min(len(humans), seats - 1 - robots))]
        friends += [0] * (seats - 1 - len(friends))
        config = {"game_type": game_type, "max_players": seats, "rules": game_type}
        await creator.invite(friends, config)
