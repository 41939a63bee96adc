"""The admin routes and a player's own account routes over the /async service without
sockets: a stand-in runtime commits to a real SQLite store (the role is read there, the audit
written there) and hands every other effect to the harness, whose clock the test moves."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest

from parlour.accounts.limits import LoginLimiter
from parlour.api import ApiResponse, HttpRequest
from parlour.core.effects import ConnId, Effect, Store
from parlour.core.service import Service
from parlour.protocols.async_ws.game.model import decode_game
from parlour.protocols.async_ws.http.account_http import AccountSelfRoutes
from parlour.protocols.async_ws.http.admin_http import AdminRoutes
from parlour.storage import AccountErased, AuditRow, Record, StoreFailure
from parlour.storage.sqlite import SQLiteStore
from tests.protocols.async_ws.cluster_harness import ClusterHarness
from tests.protocols.async_ws.harness import Harness
from tests.protocols.async_ws.test_history import fish_game, play_out
from tests.storage.rows import finished_game, game

T = TypeVar("T")


class Stored(Harness):
    """The harness, keeping what it is handed in a real store as well."""

    def __init__(self, store: SQLiteStore) -> None:
        super().__init__()
        self.store = store

    def _keep(self, records: list[Record]) -> None:
        super()._keep(records)
        self.store.commit(records)


class Runtime:
    """The runtime as the routes see it: the harness's clock, commits to the store (after one
    turn of the loop, as a real commit takes), reads inline; ``failing`` refuses commits."""

    def __init__(self, h: Stored) -> None:
        self.h = h
        self.store = h.store
        self.failing = False

    def clock(self) -> float:
        return self.h.now

    async def stored(
        self, effects: list[Effect], service: Service | None = None, origin: ConnId | None = None
    ) -> None:
        await asyncio.sleep(0)
        if self.failing and any(isinstance(effect, Store) for effect in effects):
            raise StoreFailure("disk full")
        self.h.run(effects)

    async def in_store_thread(self, work: Callable[[], T]) -> T:
        return work()


class StoredCluster(Stored, ClusterHarness):
    """A cluster's hub and shard owners (cluster_harness.py), storing as Stored does."""


class Site:
    def __init__(self, tmp_path: Path, harness: type[Stored] = Stored) -> None:
        self.store = SQLiteStore(tmp_path / "parlour.db")
        self.h = harness(self.store)
        self.runtime = Runtime(self.h)
        service = self.h.service
        self.own = AccountSelfRoutes(
            service,
            self.runtime,
            service.tokens,
            LoginLimiter(5, 20, 300.0),
            lambda p: f"hash:{p}",
            lambda h, p: h == f"hash:{p}",
        )
        self.admin = AdminRoutes(service, self.runtime, service.tokens, self.own)
        self.routes = {**self.own.routes(), **self.admin.routes()}

    def call(self, method: str, target: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        return asyncio.run(self.acall(method, target, token, body))

    async def acall(
        self, method: str, target: str, token: str | None = None, body: Any = None
    ) -> tuple[int, Any]:
        headers = {"content-type": "application/json"}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        data = b"" if body is None else json.dumps(body).encode()
        path = target.split("?", 1)[0]
        answer: ApiResponse = await self.routes[path](
            HttpRequest(method, target, path, headers, data, "127.0.0.1")
        )
        return answer.status, json.loads(answer.body)

    def admin_token(self, name: str) -> str:
        """A new account granted the admin role in the store, and its session token."""
        _, token = self.h.account(name)
        granted = self.store.set_role(
            name, "admin", AuditRow("g-" + name, self.h.now, "cli", "grant", name, "", "{}")
        )
        assert granted is not None
        return token

    def signed_in(self, name: str, password: str = "old password") -> tuple[int, int, str]:
        """A player with a password, connected: (connection, account id, token)."""
        account, effects = self.h.service.create_account(name, f"hash:{password}", self.h.now)
        assert account is not None
        self.h.run(effects)
        token, _ = self.h.service.tokens.issue(account.id, name, self.h.now)
        conn = self.h.connect()
        self.h.send(conn, type="AsyncAuthRequest", name=name, sessionToken=token)
        self.h.expect(conn, "AsyncConnectedRequest")
        return conn, account.id, token

    def sign_in(self, name: str, token: str) -> dict[str, Any]:
        """A new connection signing in with ``token``: what it is answered."""
        conn = self.h.connect()
        self.h.send(conn, type="AsyncAuthRequest", name=name, sessionToken=token)
        answer: dict[str, Any] = self.h.inbox[conn].popleft()
        return answer


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path)


ADMIN_ROUTES = [
    ("GET", "/api/admin/dashboard"),
    ("GET", "/api/admin/players?q=a"),
    ("GET", "/api/admin/player?name=ann"),
    ("POST", "/api/admin/mute"),
    ("POST", "/api/admin/ban"),
    ("POST", "/api/admin/unban"),
    ("POST", "/api/admin/reset"),
    ("GET", "/api/admin/reports"),
    ("POST", "/api/admin/reports/act"),
    ("GET", "/api/admin/games"),
    ("POST", "/api/admin/games/abort"),
    ("GET", "/api/admin/audit"),
]


def test_every_admin_route_refuses_players_and_the_unsigned(site: Site) -> None:
    assert {path.split("?")[0] for _, path in ADMIN_ROUTES} == set(site.admin.routes())
    _, _, token = site.signed_in("ann")
    for method, path in ADMIN_ROUTES:
        body = {"name": "ann", "reason": "x"} if method == "POST" else None
        assert site.call(method, path, None, body) == (
            401,
            {"error": "send the session token: Authorization: Bearer <token>"},
        )
        assert site.call(method, path, "not a token", body)[0] == 401
        assert site.call(method, path, token, body) == (403, {"error": "admins only"})
    denied = site.store.audit_log(100, action="denied")
    assert len(denied) == len(ADMIN_ROUTES) and {row.actor for row in denied} == {"ann"}


def test_a_role_granted_or_revoked_in_the_store_holds_at_the_next_request(site: Site) -> None:
    _, _, token = site.signed_in("root")
    assert site.call("GET", "/api/admin/players?q=", token)[0] == 403
    site.store.set_role("root", "admin", AuditRow("g1", site.h.now, "cli", "grant", "root", "", "{}"))
    status, found = site.call("GET", "/api/admin/players?q=ro", token)
    assert status == 200 and [p["name"] for p in found["players"]] == ["root"]
    site.store.set_role("root", "", AuditRow("g2", site.h.now, "cli", "revoke", "root", "", "{}"))
    assert site.call("GET", "/api/admin/players?q=", token)[0] == 403


def test_a_ban_closes_the_connection_refuses_sign_in_and_lifts_itself(site: Site) -> None:
    h = site.h
    admin = site.admin_token("root")
    conn, _, token = site.signed_in("ann")
    assert site.call(
        "POST", "/api/admin/ban", admin, {"name": "nobody", "reason": "spam", "minutes": 60}
    ) == (
        404,
        {"error": "no player is named 'nobody'"},
    )
    assert site.call("POST", "/api/admin/ban", admin, {"name": "ann", "reason": "  "})[0] == 400
    status, banned = site.call(
        "POST", "/api/admin/ban", admin, {"name": "ANN", "reason": "spam", "minutes": 60}
    )
    assert status == 200 and banned == {"name": "ann", "banned_until": h.now + 3600, "reason": "spam"}
    # Her open connection is told why and closed, and signed out at once.
    told = h.expect(conn, "AsyncConnectionErrorRequest")
    assert "banned until" in told["message"] and "spam" in told["message"]
    assert h.closed[conn].code == 1008 and 1 not in h.service.hub.online
    # A sign-in with any token, old or new, gets the reason and the end.
    fresh, _ = h.service.tokens.issue(2, "ann", h.now, revision=h.service.account_named("ann").revision)  # type: ignore[union-attr]
    for attempt in (token, fresh):
        refused = site.sign_in("ann", attempt)
        assert refused["reason"] == "BAD_CREDENTIALS" and "spam" in refused["message"]
    assert site.call("POST", "/api/account/sign-out", token, {})[0] == 401
    # Stored with its audit record: who, what, when, why.
    row = site.store.account_by_name("ann")
    assert row is not None and (row.ban_reason, row.ban_until) == ("spam", h.now + 3600)
    (audit,) = site.store.audit_log(10, action="ban")
    assert (audit.actor, audit.target, audit.reason, audit.at) == ("root", "ann", "spam", h.now)
    # The ban ends by itself: the token issued under the current counter signs in again.
    h.now += 3600
    assert site.sign_in("ann", fresh)["type"] == "AsyncConnectedRequest"
    # The old token was revoked by the ban and stays so.
    assert site.sign_in("ann", token)["reason"] == "EXPIRED_TOKEN"


def test_unban_and_a_ban_for_good(site: Site) -> None:
    admin = site.admin_token("root")
    _, _, _ = site.signed_in("ann")
    assert site.call("POST", "/api/admin/unban", admin, {"name": "ann", "reason": "oops"}) == (
        409,
        {"error": "ann is not banned"},
    )
    status, banned = site.call("POST", "/api/admin/ban", admin, {"name": "ann", "reason": "cheat"})
    assert status == 200 and banned["banned_until"] is None
    site.h.now += 10 * 365 * 86400
    account = site.h.service.account_named("ann")
    assert account is not None and account.ban is not None and account.ban.active(site.h.now)
    root = site.h.service.account_named("root")
    assert root is not None
    admin, _ = site.h.service.tokens.issue(root.id, "root", site.h.now)  # the old one expired
    assert site.call("POST", "/api/admin/unban", admin, {"name": "ann", "reason": "appeal"})[0] == 200
    token, _ = site.h.service.tokens.issue(account.id, "ann", site.h.now, account.revision)
    assert site.sign_in("ann", token)["type"] == "AsyncConnectedRequest"
    assert [row.action for row in site.store.audit_log(10, target="ann")] == ["unban", "ban"]


def test_an_admin_does_not_moderate_an_admin_nor_itself(site: Site) -> None:
    admin = site.admin_token("root")
    site.admin_token("chief")
    for route, body in (
        ("/api/admin/ban", {"name": "chief", "reason": "coup"}),
        ("/api/admin/mute", {"name": "chief", "reason": "coup", "minutes": 5}),
        ("/api/admin/reset", {"name": "chief", "reason": "coup"}),
        ("/api/admin/ban", {"name": "root", "reason": "me"}),
    ):
        status, answer = site.call("POST", route, admin, body)
        assert status == 403 and "admin" in answer["error"]
    assert site.h.service.account_named("chief").ban is None  # type: ignore[union-attr]
    assert site.store.audit_log(10, action="ban") == []


def test_a_mute_silences_the_chat_until_it_ends(site: Site) -> None:
    h = site.h
    admin = site.admin_token("root")
    conn, _, _ = site.signed_in("ann")
    h.send(conn, type="EnterLobbyRequest")
    h.clear()
    status, muted = site.call(
        "POST", "/api/admin/mute", admin, {"name": "ann", "reason": "rude", "minutes": 5}
    )
    assert status == 200 and muted["muted_until"] == h.now + 300
    h.send(conn, type="MulticastChatRequest", text="hello", game_id=0)
    assert h.expect(conn, "ClientChatBlockedRequest")["muted"] is True
    profile = site.call("GET", "/api/admin/player?name=ann", admin)[1]
    assert profile["muted_until"] == h.now + 300
    h.now += 301
    h.clear()
    h.send(conn, type="MulticastChatRequest", text="hello again", game_id=0)
    h.none(conn, "ClientChatBlockedRequest")


def test_sign_out_everywhere_revokes_every_token(site: Site) -> None:
    h = site.h
    conn, _, token = site.signed_in("ann")
    assert site.call("POST", "/api/account/sign-out", token, {}) == (200, {"signed_out": True})
    assert h.expect(conn, "AsyncConnectionErrorRequest")["message"] == "signed out everywhere"
    assert conn in h.closed
    # The revoked token, used again: refused by sign-in and by HTTP, with why.
    assert site.sign_in("ann", token)["reason"] == "EXPIRED_TOKEN"
    status, answer = site.call("POST", "/api/account/sign-out", token, {})
    assert status == 401 and "this session was ended" in answer["error"]
    assert site.store.account_by_name("ann").revision == 1  # type: ignore[union-attr]


def test_a_new_password_ends_the_other_sessions_and_a_store_failure_changes_nothing(site: Site) -> None:
    _, _, token = site.signed_in("ann")
    body = {"password": "wrong", "new_password": "new password"}
    assert site.call("POST", "/api/account/password", token, body) == (403, {"error": "wrong password"})
    body["password"] = "old password"
    site.runtime.failing = True
    assert site.call("POST", "/api/account/password", token, body)[0] == 503
    assert site.h.service.account_named("ann").password_hash == "hash:old password"  # type: ignore[union-attr]
    site.runtime.failing = False
    status, answer = site.call("POST", "/api/account/password", token, body)
    assert status == 200
    assert site.sign_in("ann", answer["token"])["type"] == "AsyncConnectedRequest"
    assert site.sign_in("ann", token)["reason"] == "EXPIRED_TOKEN"
    assert site.store.account_by_name("ann").password_hash == "hash:new password"  # type: ignore[union-attr]


def test_a_forced_reset_hands_over_a_one_time_token(site: Site) -> None:
    admin = site.admin_token("root")
    conn, _, token = site.signed_in("ann")
    status, reset = site.call("POST", "/api/admin/reset", admin, {"name": "ann", "reason": "account stolen"})
    assert status == 200 and reset["name"] == "ann"
    assert site.h.service.account_named("ann").password_hash == ""  # type: ignore[union-attr]
    assert conn in site.h.closed and site.sign_in("ann", token)["reason"] == "EXPIRED_TOKEN"
    # A reset token is no session token.
    assert site.sign_in("ann", reset["reset_token"])["reason"] == "BAD_CREDENTIALS"
    body = {"name": "ann", "reset_token": reset["reset_token"], "new_password": "brand new words"}
    status, session = site.call("POST", "/api/account/reset", None, body)
    assert status == 200 and site.sign_in("ann", session["token"])["type"] == "AsyncConnectedRequest"
    status, again = site.call("POST", "/api/account/reset", None, body)
    assert status == 401 and "used already" in again["error"]


def test_a_deleted_account_frees_its_name_and_keeps_nothing_personal(site: Site) -> None:
    h = site.h
    conn, ann_id, token = site.signed_in("ann")
    bob_conn, bob_id, _ = site.signed_in("bob")
    h.send(bob_conn, type="AsyncBuddyManagementRequest", player_ids=[ann_id], add=True)
    h.send(conn, type="AsyncIgnoreManagementRequest", player_ids=[bob_id], add=True)
    assert site.call("POST", "/api/account/delete", token, {"password": "nope"})[0] == 403
    assert site.call("POST", "/api/account/delete", token, {"password": "old password"}) == (
        200,
        {"deleted": True},
    )
    assert h.service.account_named("ann") is None
    row = site.store.account(ann_id)
    assert row is not None and (row.name, row.password_hash) == (f"deleted-{ann_id}", "")
    assert site.store.relations() == []
    assert conn in h.closed and site.sign_in("ann", token)["reason"] == "BAD_CREDENTIALS"
    # The name is free again.
    account, _ = h.service.create_account("ann", "hash:x", h.now)
    assert account is not None and account.id != ann_id


def test_the_reports_queue_shows_the_lines_around_and_two_admins_get_one_answer_each(site: Site) -> None:
    h = site.h
    first, second = site.admin_token("root"), site.admin_token("chief")
    toto, _, _ = site.signed_in("toto")
    ann, _, _ = site.signed_in("ann")
    for conn in (toto, ann):
        h.send(conn, type="EnterLobbyRequest")
    h.send(toto, type="MulticastChatRequest", text="you all stink", game_id=0)
    h.now += 1
    h.send(ann, type="MulticastChatRequest", text="/report toto insults", game_id=0)
    status, queue = site.call("GET", "/api/admin/reports", first)
    assert status == 200
    (report,) = queue["reports"]
    assert (report["reporter"], report["reported"], report["text"], report["closed"]) == (
        "ann",
        "toto",
        "insults",
        None,
    )
    assert [(line["sender"], line["text"], line["reported"]) for line in report["context"]] == [
        ("toto", "you all stink", True)
    ]

    async def both() -> list[tuple[int, Any]]:
        act = {"report": report["id"], "action": "ban", "reason": "insults", "minutes": 60}
        return list(
            await asyncio.gather(
                site.acall("POST", "/api/admin/reports/act", first, act),
                site.acall("POST", "/api/admin/reports/act", second, {**act, "action": "dismiss"}),
            )
        )

    (status_a, answer_a), (status_b, answer_b) = asyncio.run(both())
    assert status_a == 200 and answer_a["name"] == "toto"
    assert status_b == 409 and answer_b["closed_by"] == "root"
    assert h.service.account_named("toto").ban is not None  # type: ignore[union-attr]
    # Closed now: later attempts are told who closed it and how.
    status, late = site.call(
        "POST", "/api/admin/reports/act", second, {"report": report["id"], "action": "dismiss", "reason": "x"}
    )
    assert status == 409 and late["closed_by"] == "root" and late["decision"]["action"] == "ban"
    assert site.call("GET", "/api/admin/reports", first)[1]["reports"] == []
    closed = site.call("GET", "/api/admin/reports?status=closed", first)[1]["reports"]
    assert closed[0]["closed"]["by"] == "root"
    assert (
        site.call(
            "POST", "/api/admin/reports/act", first, {"report": "9@1.0", "action": "dismiss", "reason": "x"}
        )[0]
        == 404
    )


def test_an_async_game_aborted_by_an_admin_tells_its_players_why(site: Site) -> None:
    h = site.h
    admin = site.admin_token("root")
    ann, _, _ = site.signed_in("ann")
    bob, _, _ = site.signed_in("bob")
    game_id = h.open_game(ann, bob)
    h.clear()
    games = site.call("GET", "/api/admin/games?protocol=async", admin)[1]["games"]
    assert [(g["game_id"], g["state"], g["players"]) for g in games] == [
        (str(game_id), "RUNNING", ["ann", "bob"])
    ]
    body = {"protocol": "async", "game_id": str(game_id), "reason": "stuck"}
    assert site.call("POST", "/api/admin/games/abort", admin, body)[0] == 200
    for conn in (ann, bob):
        assert (
            h.expect(conn, "ClientChatRequest", game_id=game_id)["text"]
            == "An admin aborted this game: stuck"
        )
        h.expect(conn, "GameAbortedRequest", game_id=game_id)
    assert h.games[game_id].status == "ABORTING"
    status, again = site.call("POST", "/api/admin/games/abort", admin, body)
    assert status == 409 and "ABORTING" in again["error"]
    assert site.call("POST", "/api/admin/games/abort", admin, {**body, "game_id": "999"})[0] == 404
    assert [row.target for row in site.store.audit_log(10, action="abort")] == [f"async:{game_id}"]


def test_a_started_game_in_a_cluster_is_aborted_on_its_shards_owner(tmp_path: Path) -> None:
    site = Site(tmp_path, StoredCluster)
    h = site.h
    assert isinstance(h, ClusterHarness)
    admin = site.admin_token("root")
    ann, _, _ = site.signed_in("ann")
    bob, _, _ = site.signed_in("bob")
    game_id = h.open_game(ann, bob)
    owner = h.shard_of(game_id)
    assert h.service.games.is_placed(game_id) and game_id in owner.games
    h.clear()
    body = {"protocol": "async", "game_id": str(game_id), "reason": "stuck"}
    assert site.call("POST", "/api/admin/games/abort", admin, body) == (
        200,
        {"protocol": "async", "game_id": str(game_id), "aborted": True},
    )
    for conn in (ann, bob):
        assert (
            h.expect(conn, "ClientChatRequest", game_id=game_id)["text"]
            == "An admin aborted this game: stuck"
        )
        h.expect(conn, "GameAbortedRequest", game_id=game_id)
    # Run and stored by the shard's owner; the hub's copy follows.
    assert owner.games[game_id].status == "ABORTING" == h.games[game_id].status
    assert h.service.games[game_id].status == "ABORTING"
    status, again = site.call("POST", "/api/admin/games/abort", admin, body)
    assert status == 409 and "ABORTING" in again["error"]
    # A shard without an owner for now: the admin is told to try again, and nothing is audited.
    other = h.open_game(ann, bob)
    h.unowned.add(h.shard_of(other).name)
    status, moving = site.call("POST", "/api/admin/games/abort", admin, {**body, "game_id": str(other)})
    assert status == 503 and "try again" in moving["error"]
    assert h.shard_of(other).games[other].status == "RUNNING"
    assert [row.target for row in site.store.audit_log(10, action="abort")] == [f"async:{game_id}"]


def test_the_audit_log_is_filtered_and_a_profile_shows_the_player(site: Site) -> None:
    h = site.h
    admin = site.admin_token("root")
    site.signed_in("ann")
    site.signed_in("bob")
    site.call("POST", "/api/admin/mute", admin, {"name": "ann", "reason": "rude", "minutes": 5})
    h.now += 10
    site.call("POST", "/api/admin/ban", admin, {"name": "bob", "reason": "spam", "minutes": 5})
    status, log = site.call("GET", "/api/admin/audit?action=ban", admin)
    assert status == 200 and [(r["target"], r["reason"]) for r in log["audit"]] == [("bob", "spam")]
    since = site.call("GET", f"/api/admin/audit?since={h.now}&actor=root", admin)[1]["audit"]
    assert {r["action"] for r in since} >= {"ban"} and "mute" not in {r["action"] for r in since}
    assert site.call("GET", "/api/admin/audit?since=soon", admin)[0] == 400
    assert site.call("GET", "/api/admin/audit?who=me", admin)[0] == 400
    status, profile = site.call("GET", "/api/admin/player?name=bob", admin)
    assert status == 200
    assert (profile["name"], profile["online"], profile["ban"]["reason"], profile["role"]) == (
        "bob",
        False,
        "spam",
        "",
    )
    assert site.call("GET", "/api/admin/player?name=nobody", admin)[0] == 404


class Others:
    """The other protocols' games as the app hands them in (node_games.LocalGames): one Fish table."""

    def __init__(self) -> None:
        self.aborted: list[tuple[str, str, str]] = []

    async def live(self) -> list[dict[str, Any]]:
        return [
            {"protocol": "fish", "game_id": "t1", "game": "fish", "state": "PLAYING", "players": ["a", "b"]}
        ]

    async def abort(self, protocol: str, game_id: str, reason: str) -> str | None:
        if game_id != "t1":
            return "no table in play has this id"
        self.aborted.append((protocol, game_id, reason))
        return None


def test_the_other_protocols_games_are_listed_and_aborted_through_the_app(site: Site) -> None:
    others = Others()
    site.routes.update(
        AdminRoutes(site.h.service, site.runtime, site.h.service.tokens, site.own, others).routes()
    )
    admin = site.admin_token("root")
    games = site.call("GET", "/api/admin/games", admin)[1]["games"]
    assert [(g["protocol"], g["game_id"]) for g in games] == [("fish", "t1")]
    assert site.call("GET", "/api/admin/games?protocol=async", admin)[1]["games"] == []
    body = {"protocol": "fish", "game_id": "t1", "reason": "stuck"}
    assert site.call("POST", "/api/admin/games/abort", admin, body)[0] == 200
    assert others.aborted == [("fish", "t1", "stuck")]
    assert site.call("POST", "/api/admin/games/abort", admin, {**body, "game_id": "t9"})[0] == 404
    assert site.call("POST", "/api/admin/games/abort", admin, {**body, "protocol": "chess"})[0] == 400
    assert [row.target for row in site.store.audit_log(10, action="abort")] == ["fish:t1"]


def test_a_deleted_account_is_anonymised_in_chat_games_and_the_push_outbox(site: Site) -> None:
    h = site.h
    ann, ann_id, token = site.signed_in("ann")
    bob, _, _ = site.signed_in("bob")
    for conn in (ann, bob):
        h.send(conn, type="EnterLobbyRequest")
    h.send(ann, type="MulticastChatRequest", text="hello all", game_id=0)
    game_id = h.open_game(ann, bob)
    h.send(ann, type="GameForfeitRequest", game_id=game_id)
    assert site.call("POST", "/api/account/delete", token, {"password": "old password"})[0] == 200
    alias = f"deleted-{ann_id}"
    # The store: the chat line signed with the alias, the game's seat renamed.
    (line,) = [row for row in site.store.load_chat([0], 10)[0] if row.sender == ann_id]
    assert (line.sender_name, line.text) == (alias, "hello all")
    stored = site.store.load_async_game(game_id)
    assert stored is not None and "ann" not in [seat.name for seat in decode_game(stored.doc).seats]
    # The hub: its history and its copy of the game.
    assert [row.sender_name for row in h.service.hub.chat_log.history(0) if row.sender == ann_id] == [alias]
    record = h.service.games.get(game_id)
    assert record is not None and [seat.name for seat in record.seats] == [alias, "bob"]


def test_a_deletion_is_one_commit_with_the_finished_games_only_the_store_holds(site: Site) -> None:
    h = site.h
    ann, ann_id, token = site.signed_in("ann")
    bob, _, _ = site.signed_in("bob")
    game_id = h.open_game(ann, bob)
    h.send(ann, type="GameForfeitRequest", game_id=game_id)
    h.send(bob, type="GameForfeitRequest", game_id=game_id)
    # As if retained no more in memory: only the store has it, finished.
    row = site.store.load_async_game(game_id)
    assert row is not None
    site.store.commit([msgspec.structs.replace(row, status="ABORTED")])
    h.service.games.reload({game_id: None}, h.now)
    assert game_id not in h.service.games
    commits = len(site.h.records)
    site.runtime.failing = True
    failed = site.call("POST", "/api/account/delete", token, {"password": "old password"})
    assert failed[0] == 503
    # Nothing was deleted: the name, the game's seat and the sign-in are as they were.
    assert h.service.account_named("ann") is not None and site.sign_in("ann", token)["type"] == (
        "AsyncConnectedRequest"
    )
    assert "ann" in [s.name for s in decode_game(site.store.load_async_game(game_id).doc).seats]  # type: ignore[union-attr]
    site.runtime.failing = False
    assert site.call("POST", "/api/account/delete", token, {"password": "old password"})[0] == 200
    alias = f"deleted-{ann_id}"
    stored = [record for record in site.h.records[commits:]]
    (erased,) = [record for record in stored if isinstance(record, AccountErased)]
    assert erased.account_id == ann_id and [game for game, _ in erased.games] == [game_id]
    again = site.store.load_async_game(game_id)
    assert again is not None and [s.name for s in decode_game(again.doc).seats] == [alias, "bob"]
    assert site.store.account(ann_id).name == alias  # type: ignore[union-attr]


def test_a_deleted_player_of_a_game_on_a_shard_is_renamed_by_its_owner(tmp_path: Path) -> None:
    site = Site(tmp_path, StoredCluster)
    h = site.h
    assert isinstance(h, ClusterHarness)
    ann, ann_id, token = site.signed_in("ann")
    bob, _, _ = site.signed_in("bob")
    game_id = h.open_game(ann, bob)
    h.send(ann, type="CommitActionRequest", game_id=game_id, next_state="s1", next_players=[2])
    h.expect(ann, "ActionCommitedRequest", turn_index=2)
    assert h.service.games[game_id].turn_index == 1  # the hub's copy: as placed
    assert site.call("POST", "/api/account/delete", token, {"password": "old password"})[0] == 200
    alias = f"deleted-{ann_id}"
    # Stored by the shard's owner, as it runs the game (never the hub's older copy).
    stored = decode_game(h.games[game_id].doc)
    assert ([s.name for s in stored.seats], stored.turn_index) == ([alias, "bob"], 2)
    assert [s.name for s in h.shard_of(game_id).games[game_id].seats] == [alias, "bob"]
    assert h.directory.accounts.name(ann_id) == alias


def test_last_seen_is_stored_at_the_next_tick_and_outlives_a_restart(site: Site) -> None:
    h = site.h
    admin = site.admin_token("root")
    conn, ann_id, _ = site.signed_in("ann")
    signed_in_at = h.now
    assert site.store.account(ann_id).last_seen is None  # type: ignore[union-attr]
    h.advance(1.0)  # the ticker stores who was seen meanwhile, in one commit
    assert site.store.account(ann_id).last_seen == signed_in_at  # type: ignore[union-attr]
    before = len(h.records)
    h.advance(1.0)
    assert len(h.records) == before  # nothing seen: nothing stored
    h.now += 30
    h.drop(conn)
    left_at = h.now
    h.advance(1.0)
    assert site.store.account(ann_id).last_seen == left_at  # type: ignore[union-attr]
    profile = site.call("GET", "/api/admin/player?name=ann", admin)[1]
    assert (profile["online"], profile["last_seen"]) == (False, left_at)
    # A restarted hub has it from the store.
    restarted = Harness()
    restarted.service.restore(site.store.accounts(), [], [], None, None, h.now + 60)
    assert restarted.service.account_named("ann").last_seen == left_at  # type: ignore[union-attr]


def test_the_dashboard_serves_the_sampled_columns(site: Site) -> None:
    columns = {"at": [10.0, 20.0], "connections": [1, 2]}
    site.routes.update(
        AdminRoutes(
            site.h.service, site.runtime, site.h.service.tokens, site.own, None, lambda: columns
        ).routes()
    )
    admin = site.admin_token("root")
    assert site.call("GET", "/api/admin/dashboard", admin) == (200, {"samples": columns})
    assert site.call("GET", "/api/admin/dashboard?x=1", admin)[0] == 400


def _end_async_games(site: Site) -> tuple[int, int]:
    """Two /async games played to the end (OVER) a minute apart: a server-rules Fish game
    (replayable) and a client-rules one (not); their ids."""
    h = site.h
    fish, people = fish_game(h)
    play_out(h, {account: conn for conn, account, _ in people.values()}, fish)
    ann, bob = people["ann"][0], people["bob"][0]
    for conn in (ann, bob):
        h.send(conn, type="GameOutcomeConfirmationRequest", game_id=fish)
    h.now += 60
    client = h.open_game(ann, bob)
    h.send(ann, type="GameOverRequest", game_id=client, finalScores={"1": [1, 1], "2": [0, 2]})
    for conn in (ann, bob):
        h.send(conn, type="GameOutcomeConfirmationRequest", game_id=client)
    assert h.games[fish].status == h.games[client].status == "OVER"
    return fish, client


def test_finished_games_of_every_protocol_are_listed_newest_first_a_page_at_a_time(site: Site) -> None:
    admin = site.admin_token("root")
    fish, client = _end_async_games(site)
    ended = site.store.load_async_game(fish)
    assert ended is not None
    at = ended.updated
    # The other protocols' games, one ending at the same time as the Fish /async game (the
    # cursor must not lose either), one cancelled before it started (no replay), a live one.
    site.store.commit(
        [
            finished_game(1, finished=at - 10.0),
            finished_game(2, finished=at),
            finished_game(3, finished=at + 30.0, protocol="fish", game="fish", state="ABORTED"),
            game(4, state="CANCELLED", finished=at - 5.0),
            game(5, state="PLAYING"),
        ]
    )
    status, body = site.call("GET", "/api/admin/games?state=finished", admin)
    assert status == 200 and body["next"] is None
    listed = [(g["protocol"], g["game_id"], g["state"], g["ended"], g["replay"]) for g in body["games"]]
    assert listed == [
        ("async", str(client), "OVER", at + 60.0, None),
        ("fish", "game-0003", "ABORTED", at + 30.0, "/?replay=game-0003"),
        ("apologies", "game-0002", "COMPLETED", at, "/?replay=game-0002"),
        ("async", str(fish), "OVER", at, f"/play.html?replay={fish}"),
        ("apologies", "game-0004", "CANCELLED", at - 5.0, None),
        ("apologies", "game-0001", "COMPLETED", at - 10.0, "/?replay=game-0001"),
    ]
    first = body["games"][3]
    assert (first["game"], first["players"], first["record"]) == (
        "fish",
        ["ann", "bob"],
        f"/api/async/replay?game_id={fish}",
    )
    assert body["games"][1]["players"] == ["handle3", "Robbie"]
    # Page by page, through the tie, whatever the page's size.
    for size in (1, 2, 4):
        shown: list[Any] = []
        after: str | None = None
        pages = 0
        while True:
            query = f"state=finished&limit={size}" + (f"&before={after}" if after else "")
            status, page = site.call("GET", f"/api/admin/games?{query}", admin)
            assert status == 200 and len(page["games"]) <= size
            shown += page["games"]
            pages += 1
            after = page["next"]
            if after is None:
                break
        assert shown == body["games"] and pages == -(-len(listed) // size)
    # One protocol's.
    mine = site.call("GET", "/api/admin/games?state=finished&protocol=async", admin)[1]["games"]
    assert [g["game_id"] for g in mine] == [str(client), str(fish)]
    mine = site.call("GET", "/api/admin/games?state=finished&protocol=apologies&limit=2", admin)[1]
    assert [g["game_id"] for g in mine["games"]] == ["game-0002", "game-0004"] and mine["next"]
    rest = site.call(
        "GET", f"/api/admin/games?state=finished&protocol=apologies&before={mine['next']}", admin
    )
    assert [g["game_id"] for g in rest[1]["games"]] == ["game-0001"] and rest[1]["next"] is None
    # Audited as the live list is, with the state.
    details = [json.loads(row.detail) for row in site.store.audit_log(100, action="games.list")]
    assert {"protocol": "async", "state": "finished", "before": None} in details


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("state=over", "'state' is live or finished"),
        ("state=", "'state' is live or finished"),
        ("state=finished&limit=0", "'limit' must be a whole number from 1 to 500"),
        ("state=finished&limit=501", "'limit' must be a whole number from 1 to 500"),
        ("state=finished&limit=ten", "'limit' must be a whole number from 1 to 500"),
        ("state=finished&before=nonsense", "'before' is the 'next' of a previous page"),
        ("state=finished&before=W10", "'before' is the 'next' of a previous page"),  # []
        # [null, [1.0, 2**64]]: past the store's game ids
        (
            "state=finished&before=W251bGwsWzEuMCwxODQ0Njc0NDA3MzcwOTU1MTYxNl1d",
            "'before' is the 'next' of a previous page",
        ),
        ("state=finished&protocol=chess", "'protocol' is one of async, apologies, fish, tsuro"),
        ("state=live&limit=5", "'limit' and 'before' page the finished games only"),
        ("state=finished&page=2", "unknown parameter 'page'"),
    ],
)
def test_a_bad_games_query_is_refused_in_words(site: Site, query: str, words: str) -> None:
    admin = site.admin_token("root")
    assert site.call("GET", f"/api/admin/games?{query}", admin) == (400, {"error": words})


def test_the_largest_page_of_finished_games_is_500_and_live_is_the_default(site: Site) -> None:
    admin = site.admin_token("root")
    assert site.call("GET", "/api/admin/games?state=finished&limit=500", admin) == (
        200,
        {"games": [], "next": None},
    )
    assert site.call("GET", "/api/admin/games?state=live", admin) == site.call(
        "GET", "/api/admin/games", admin
    )
    details = [json.loads(row.detail) for row in site.store.audit_log(100, action="games.list")]
    assert details.count({"protocol": "", "state": "live"}) == 2
