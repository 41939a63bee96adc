"""Small builders of store rows, shared by the storage and ``parlour db`` tests."""

from __future__ import annotations

from typing import Any

from parlour.storage import (
    MOVE,
    REMOVE_SEAT,
    SNAPSHOT_VERSION,
    AccountRow,
    AsyncGameRow,
    AsyncTurnRow,
    AuditRow,
    ChatRow,
    DeviceRow,
    GameResultRow,
    GameRow,
    GameSnapshotRow,
    MetaRow,
    MoveRow,
    NotificationRow,
    PlayerRow,
    RatingRow,
    Record,
    RelationRow,
    ReportRow,
    SeatRow,
)

__all__ = [
    "ASYNC_STATUSES",
    "account",
    "async_game",
    "async_turns",
    "chat_lines",
    "device",
    "finished_game",
    "game",
    "game_results",
    "game_snapshot",
    "move_rows",
    "notification",
    "player",
    "populate",
    "populate_async",
    "populate_social",
    "rating",
    "relation",
    "report",
]

#: The statuses ``populate_async`` gives its games in turn: three live ones, then two over.
ASYNC_STATUSES = ("NOT_STARTED", "RUNNING", "OUTCOME", "OVER", "ABORTED")


def player(number: int, handle: str | None = None) -> PlayerRow:
    return PlayerRow(
        id=f"player-{number:04}",
        handle=handle or f"handle{number}",
        registered=1000.0 + number,
        last_active=2000.0 + number,
    )


def game(number: int, state: str = "PLAYING", moves: int = 0, **fields: Any) -> GameRow:
    """A game with two seats, a human (``handle<number>``) and a robot."""
    defaults: dict[str, Any] = {
        "id": f"game-{number:04}",
        "protocol": "apologies",
        "game": "apologies",
        "name": f"Game {number}",
        "state": state,
        "created": 100.0 + number,
        "last_active": 200.0 + number,
        "seed": 7_000_000_000 + number,  # more than 32 bits: the column is a BIGINT
        "moves": moves,
        "config": {"mode": "STANDARD", "players": 2, "visibility": "PUBLIC"},
        "seats": [
            SeatRow(handle=f"handle{number}", robot=False, state="PLAYING", player_id=f"player-{number:04}"),
            SeatRow(handle="Robbie", robot=True, state="PLAYING", extra={"age": 9}),
        ],
    }
    defaults.update(fields)
    return GameRow(**defaults)


def finished_game(number: int, finished: float, **fields: Any) -> GameRow:
    fields.setdefault("state", "COMPLETED")
    fields.setdefault("result", {"winners": [0], "reason": "won", "comment": None})
    return game(number, started=150.0 + number, finished=finished, **fields)


def move_rows(game_id: str, count: int, start: int = 0) -> list[MoveRow]:
    """Moves ``start..count-1``, every fifth one a seat taken out of play."""
    return [
        MoveRow(game_id, seq, seq % 2, REMOVE_SEAT if seq % 5 == 4 else MOVE, seq % 3, 500.0 + seq)
        for seq in range(start, count)
    ]


def game_snapshot(game_id: str, moves: int) -> GameSnapshotRow:
    """A snapshot after ``moves`` moves, whose document holds every byte value (NUL included)."""
    return GameSnapshotRow(game_id, moves, SNAPSHOT_VERSION, bytes(range(256)) + game_id.encode())


def populate(games: int = 6, moves: int = 4) -> list[Record]:
    """One batch: two players, and games alternately live and finished, each with its moves."""
    records: list[Record] = [player(1), player(2)]
    for number in range(games):
        if number % 2:
            row = finished_game(number, finished=900.0 + number, moves=moves)
        elif number % 4:
            row = game(number, state="PLAYING", moves=moves)
        else:
            row = game(number, state="ADVERTISED")  # not started: no moves yet
        records.append(row)
        records.extend(move_rows(row.id, row.moves))
    return records


def account(number: int, name: str | None = None, password_hash: str | None = None) -> AccountRow:
    return AccountRow(
        id=number,
        name=name or f"Player{number}",
        password_hash=f"$argon2id$v=19$m=65536,t=3,p=4$salt{number}$hash{number}"
        if password_hash is None
        else password_hash,
        created=3000.0 + number,
    )


def async_game(number: int, status: str = "RUNNING", **fields: Any) -> AsyncGameRow:
    """An /async game whose document holds every byte value (NUL included) and its number."""
    defaults: dict[str, Any] = {
        "id": number,
        "game_type": "chess",
        "status": status,
        "created": 4000.0 + number,
        "updated": 4100.0 + number,
        "doc": bytes(range(256)) + number.to_bytes(8, "big"),
    }
    defaults.update(fields)
    return AsyncGameRow(**defaults)


def async_turns(game_id: int, count: int, start: int = 0) -> list[AsyncTurnRow]:
    return [
        AsyncTurnRow(game_id, index, 4200.0 + index, b"\x00turn\xff" + bytes([index % 256]) * index)
        for index in range(start, count)
    ]


def rating(account_id: int, game_type: str = "chess", mu: float = 25.0, sigma: float = 25 / 3) -> RatingRow:
    return RatingRow(
        account_id=account_id,
        game_type=game_type,
        mu=mu,
        sigma=sigma,
        games=account_id,
        updated=5000.0 + account_id,
        ordinal=mu - 3 * sigma,
    )


def game_results(game_id: int, at: float, aborted: bool = False) -> list[GameResultRow]:
    """The two seats of an ended Fish game: account 1 beats a robot, and its rating went up
    (an aborted game: no ranks, and a penalty)."""
    ranks = (None, None) if aborted else (1, 2)
    return [
        GameResultRow(
            game_id=game_id,
            seat=1,
            game_type="fish",
            at=at,
            account_id=1,
            name="Player1",
            rank=ranks[0],
            score=None if aborted else 30.0,
            mu=23.0 if aborted else 27.0,
            sigma=8.0,
            games=game_id,
            change=-1.0 if aborted else 1.0,
        ),
        GameResultRow(
            game_id=game_id, seat=2, game_type="fish", at=at, account_id=None, name="Robot 2", rank=ranks[1]
        ),
    ]


def populate_async(accounts: int = 3, games: int = 4, turns: int = 3) -> list[Record]:
    """One batch of /async rows: accounts, a chess rating each (and a go rating for the first),
    games of the statuses of ASYNC_STATUSES in turn, each but NOT_STARTED with its turns and each
    ended one with its results, and a metadata value. Children come before their parents: a commit writes parents first."""
    records: list[Record] = []
    for number in range(1, games + 1):
        status = ASYNC_STATUSES[(number - 1) % len(ASYNC_STATUSES)]
        records.extend(async_turns(number, 0 if status == "NOT_STARTED" else turns))
        records.append(async_game(number, status))
        if status in ("OUTCOME", "OVER", "ABORTED"):
            records.extend(game_results(number, 7000.0 + number, aborted=status == "ABORTED"))
    records.extend(rating(number, mu=20.0 + number) for number in range(1, accounts + 1))
    records.append(rating(1, "go"))
    records.extend(account(number) for number in range(1, accounts + 1))
    records.append(MetaRow("motd", "Welcome to the parlour"))
    return records


def chat_lines(scope: int, count: int, start: int = 1, sender: int = 1) -> list[ChatRow]:
    """Lines ``start..start+count-1`` of a scope, every third one with a client's chat code."""
    return [
        ChatRow(
            scope=scope,
            seq=seq,
            sender=sender,
            sender_name=f"Player{sender}",
            text=f"line {seq} of {scope}: ça va? \U0001f600",
            code=0 if seq % 3 else 300,
            sent_at=6000.0 + 100 * scope + seq,
        )
        for seq in range(start, start + count)
    ]


def relation(owner: int, other: int, kind: str = "buddy") -> RelationRow:
    return RelationRow(owner, other, kind, added=7000.0 + 10 * owner + other)


def report(reporter: int, at: float, reported: str = "Player2", scope: int = 0) -> ReportRow:
    return ReportRow(reporter=reporter, reported=reported, scope=scope, text="said rude things", at=at)


def device(account_id: int, device_type: str = "FCM", token: str | None = None) -> DeviceRow:
    return DeviceRow(account_id, device_type, token or f"token-{account_id}", linked=9000.0 + account_id)


def notification(number: int, account_id: int = 1, **fields: Any) -> NotificationRow:
    """A push notification whose payload holds a NUL and its number."""
    defaults: dict[str, Any] = {
        "id": f"n-{number:04}",
        "account_id": account_id,
        "device_type": "FCM",
        "token": f"token-{account_id}",
        "payload": b'{"loc-key": "YOUR_TURN"}\x00' + number.to_bytes(4, "big"),
        "created": 9500.0 + number,
        "attempts": 0,
        "next_attempt": 9500.0 + number,
        "delivered": None,
    }
    defaults.update(fields)
    return NotificationRow(**defaults)


def populate_social() -> list[Record]:
    """One batch of the social rows of schema v4, for the accounts 1..3 of ``populate_async``
    (which may come in the same batch, before or after): nine chat lines (four in the lobby,
    three in game 1, two in game 2), three relations, two reports, two devices, and three push
    notifications, one of them delivered."""
    return [
        *chat_lines(0, 4),
        *chat_lines(1, 3, sender=2),
        *chat_lines(2, 2, sender=3),
        relation(1, 2),
        relation(1, 3),
        relation(2, 1, "ignore"),
        report(1, at=8001.0),
        report(2, at=8002.0, reported="whoever", scope=1),
        device(1),
        device(2, "IOS", "apple-token"),
        notification(1),
        notification(2, account_id=2, token="apple-token", device_type="IOS"),
        notification(3, attempts=1, delivered=9600.0),
        AuditRow("0001", 8003.0, "Player1", "mute", "Player2", "rude", '{"minutes": 5}'),
    ]
