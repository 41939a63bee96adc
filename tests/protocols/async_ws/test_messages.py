"""The /async messages against the text's table of messages and Parlour's decisions S1-S20
(docs/async-decisions.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from parlour.protocols.async_ws import ClientMessage, ServerMessage, decode_client, encode
from parlour.protocols.async_ws.wire import messages as m

ROOT = Path(__file__).resolve().parents[3]
DECISIONS = ROOT / "docs" / "async-decisions.md"
ROW = re.compile(r"^\| (\d+) \| (\w+) \| ([^|]+) \|", re.MULTILINE)


def catalogue() -> dict[str, str]:
    """Message name -> who sends it, from the table of the text's messages, read at test time."""
    text = DECISIONS.read_text(encoding="utf-8")
    section = text.split("## The messages", 1)[1].split("\n## ", 1)[0]
    rows = ROW.findall(section)
    assert [int(number) for number, _name, _sender in rows] == list(range(1, len(rows) + 1))
    return {name: sender.strip() for _number, name, sender in rows}


def tag(cls: type[msgspec.Struct]) -> str:
    return str(cls.__struct_config__.tag)


def members(union: Any) -> set[str]:
    return {tag(cls) for cls in union.__args__}


def test_every_catalogue_message_is_declared_once() -> None:
    names = catalogue()
    assert len(names) == 87
    tags = [tag(cls) for cls in m.MESSAGES]
    extensions = {tag(cls) for cls in m.EXTENSIONS}
    assert len(tags) == len(set(tags)) == 87 + len(extensions)
    assert set(tags) - extensions == set(names)
    assert not extensions & set(names)  # an extension never takes a name of the text
    assert all(cls.__name__ == tag(cls) for cls in m.MESSAGES)
    declared = [
        value
        for name, value in vars(m).items()
        if isinstance(value, type)
        and issubclass(value, msgspec.Struct)
        and value.__struct_config__.tag
        and not name.startswith("_")  # the private bases (_Message, _Request...) are never sent
    ]
    assert sorted(map(tag, declared)) == sorted(tags)  # no tagged struct outside the unions


def test_directions_follow_the_catalogue() -> None:
    client, server = members(ClientMessage), members(ServerMessage)
    for name, sender in catalogue().items():
        if sender.startswith("both"):
            assert name in client and name in server, name
        elif sender == "client":
            assert name in client and name not in server, name
        else:
            assert sender == "server", (name, sender)
            assert name in server and name not in client, name


def test_extensions_say_so_and_seed_messages_decode_without_them() -> None:
    for cls in m.EXTENSIONS:
        assert (cls.__doc__ or "").startswith(f"{m.EXTENSION} (not in the text)"), tag(cls)
    # A seed client's EnterLobbyRequest takes the seed's lists; a field it never sends defaults.
    assert decode_client(b'{"type": "EnterLobbyRequest"}') == m.EnterLobbyRequest(deltas=False)
    assert encode(m.EnterLobbyRequest()) == b'{"type":"EnterLobbyRequest"}'
    # A pushed list carries no request_id: only the answer to GetLobbyListsRequest does.
    assert (
        encode(m.LobbyPlayerListRequest(player_list="x"))
        == b'{"type":"LobbyPlayerListRequest","player_list":"x"}'
    )


def test_requests_may_carry_a_request_id() -> None:
    for cls in ClientMessage.__args__:
        assert "request_id" in cls.__struct_fields__, tag(cls)
    assert "request_id" in m.ErrorRequest.__struct_fields__
    assert decode_client(b'{"type": "EnterLobbyRequest", "request_id": "r1"}') == m.EnterLobbyRequest(
        request_id="r1"
    )


CONFIGURATION = m.GameConfiguration(game_type="tsuro", max_players=4, idle_time=40, clock_seconds=600)
CLIENT_SAMPLES: list[Any] = [
    m.AsyncAuthRequest(name="ada", sessionToken="t0k", device=m.Device(device_type="FCM", token="abc")),
    m.AsyncDisconnectRequest(),
    m.PingRequest(timestamp=1700000000123, request_id="p"),
    m.PingRequest(timestamp=12.5),
    m.EngageGameWithFriendsRequest(friend_ids=[7, 0], configuration=CONFIGURATION),
    m.AsyncBuddyManagementRequest(operation="REMOVE", player_id=3),
    m.MulticastChatRequest(game_id=12, text="gg", recipient_ids=[2], code=300),
    m.LobbyCreateGameRequest(configuration=CONFIGURATION, initial_state="e30="),
    m.CommitActionRequest(
        game_id=1,
        turn_index=3,
        next_state="s",
        next_players=[2, 1],
        broadcast=True,
        pause_time=3,
        interruption_window_duration=3000,
        interruption_players=[2],
        request_id="c3",
    ),
    m.UpdateUserDataRequest(game_id=1, user_data="a", player_id=3, broadcast=True),
    m.InterruptActionRequest(game_id=1, turn_index=2, turn=1, interruption_data="Not this time"),
    m.GameOverRequest(game_id=1, finalScores={"1": (12, 2), "2": (23.5, 1)}, is_ranked=True),
]
REPORT = m.StatusReport(
    game_id=9,
    configuration=CONFIGURATION,
    status="RUNNING",
    players=[
        m.StatusReportPlayer(local_id=1, player_id=5, name="ada", kind="HUMAN", presence="IN_GAME"),
        m.StatusReportPlayer(local_id=2, name="robot", kind="ROBOT", state="ACTIVE"),
    ],
    turn=2,
    active_player=1,
    turn_index=4,
    clocks=[m.PlayerClock(player_id=1, remaining_seconds=12.5, armed=True)],
    outcome_not_seen=[1],
)
SERVER_SAMPLES: list[Any] = [
    m.AsyncConnectedRequest(session="s", player=m.Player(player_id=5, name="ada", ratings={"tsuro": 25.0})),
    m.GameStatusReportRequest(status_reports=[REPORT], request_id="w"),
    m.GameCreatedRequest(game_id=9, invited_by=5, status_report=REPORT),
    m.ActionRequiredRequest(
        game_id=9,
        player_id=1,
        state="s",
        turn_index=4,
        player_clock=m.PlayerClock(player_id=1, remaining_seconds=30),
        user_data=[m.PlayerData(player_id=1, data="a"), m.PlayerData(player_id=2, data="b")],
    ),
    m.ActionCommitedRequest(game_id=9, turn_index=5, pause_time=3, request_id="c3"),
    m.ErrorRequest(
        code="INDEX_CONFLICT", message="turn 4, not 3", request_type="CommitActionRequest", game_id=9
    ),
    m.ClientChatRequest(game_id=0, text="hi", sender=5, recipient_ids=[6]),
    m.GameOutcomeRequest(game_id=9, outcome=[m.OutcomeEntry(player_id=1, score=12, rank=1)], is_ranked=True),
    m.PingRequest(timestamp=3),
]


@pytest.mark.parametrize("message", CLIENT_SAMPLES, ids=lambda message: type(message).__name__)
def test_client_messages_round_trip(message: Any) -> None:
    data = encode(message)
    assert msgspec.json.decode(data)["type"] == type(message).__name__
    assert decode_client(data) == message
    assert decode_client(data.decode()) == message


@pytest.mark.parametrize("message", SERVER_SAMPLES, ids=lambda message: type(message).__name__)
def test_server_messages_round_trip(message: Any) -> None:
    assert msgspec.json.decode(encode(message), type=ServerMessage) == message


def test_encoding_is_the_flat_tagged_object_without_defaults() -> None:
    assert msgspec.json.decode(encode(m.ActionCommitedRequest(game_id=2, turn_index=5))) == {
        "type": "ActionCommitedRequest",
        "game_id": 2,
        "turn_index": 5,
    }
    assert encode(m.PingRequest(timestamp=17)) == b'{"type":"PingRequest","timestamp":17}'  # echoed as sent


@pytest.mark.parametrize(
    ("frame", "named"),
    [
        ('{"type": "NoSuchRequest"}', "$.type"),
        ('{"game_id": 3}', "type"),
        ('{"type": "ActionCommitedRequest", "game_id": 1, "turn_index": 2}', "$.type"),  # server->client only
        ('{"type": "GetClocksRequest", "game_id": 1, "bogus": 1}', "`bogus`"),
        ('{"type": "GetClocksRequest", "game_id": "1"}', "$.game_id"),
        ('{"type": "GetClocksRequest", "game_id": 0}', "$.game_id"),
        ('{"type": "GetClocksRequest"}', "`game_id`"),
        ('{"type": "AnswerInvitationRequest", "game_id": 1, "accept": "true"}', "$.accept"),  # S20
        ('{"type": "CommitActionRequest", "game_id": 1, "next_players": [9]}', "$.next_players[0]"),
        ('{"type": "GameOverRequest", "game_id": 1, "finalScores": {"9": [1, 1]}}', "$.finalScores"),
        ('{"type": "GameOverRequest", "game_id": 1, "finalScores": {"1": [1]}}', "$.finalScores"),
        ('{"type": "EngageGameWithFriendsRequest", "friend_ids": []}', "$.friend_ids"),
        ('{"type": "EngageGameWithFriendsRequest", "friend_ids": [0, 0]}', "`friend_ids`"),
        (
            '{"type": "AsyncAuthRequest", "name": "a", "sessionToken": "t", "device": {"device_type": "X", "token": "t"}}',
            "$.device.device_type",
        ),
        (
            '{"type": "CommitActionRequest", "game_id": 1, "next_simultaneous": true, "interruption_window_duration": 5}',
            "`interruption_window_duration`",
        ),
    ],
)
def test_bad_requests_name_the_field(frame: str, named: str) -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        decode_client(frame)
    assert named in str(caught.value)


def test_not_json_is_a_decode_error() -> None:
    with pytest.raises(msgspec.DecodeError):
        decode_client(b"{not json")


def create(**configuration: Any) -> bytes:
    return encode_raw(
        {"type": "LobbyCreateGameRequest", "configuration": {"game_type": "tsuro", **configuration}}
    )


def encode_raw(obj: dict[str, Any]) -> bytes:
    return msgspec.json.encode(obj)


@pytest.mark.parametrize("players", [2, 5, 8])
def test_configuration_accepts_two_to_eight_players(players: int) -> None:
    message = decode_client(create(min_players=2, max_players=players))
    assert isinstance(message, m.LobbyCreateGameRequest)
    assert message.configuration.max_players == players
    assert message.configuration.rules == "client"  # S9 default


@pytest.mark.parametrize(
    ("configuration", "named"),
    [
        ({"max_players": 1}, "$.configuration.max_players"),
        ({"max_players": 9}, "$.configuration.max_players"),
        ({"max_players": 4, "min_players": 1}, "$.configuration.min_players"),
        ({"max_players": 3, "min_players": 4}, "`min_players`"),
        ({"max_players": 4, "idle_time": -1}, "$.configuration.idle_time"),
        ({"max_players": 4, "clock_seconds": -5}, "$.configuration.clock_seconds"),
        ({"max_players": 4, "rules": "chess"}, "$.configuration.rules"),
        ({"max_players": 4, "game_type": "Not A Type"}, "$.configuration.game_type"),
        ({"max_players": 4, "colour": "red"}, "`colour`"),
        ({}, "`max_players`"),
    ],
)
def test_configuration_out_of_range_is_refused_naming_the_field(
    configuration: dict[str, Any], named: str
) -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        decode_client(create(**configuration))
    assert named in str(caught.value)


def test_private_game_with_password() -> None:
    message = decode_client(create(max_players=4, private=True, password="sesame"))
    assert isinstance(message, m.LobbyCreateGameRequest)
    assert message.configuration.password == "sesame"


@pytest.mark.parametrize("kind", ["MulticastChatRequest", "MulticastDataRequest"])
def test_recipients_ids_is_accepted_for_recipient_ids(kind: str) -> None:
    body = {"type": kind, "game_id": 4, "text": "hi", "data": "x", "recipients_ids": [2, 3]}
    del body["data" if kind == "MulticastChatRequest" else "text"]
    message = decode_client(encode_raw(body))
    assert isinstance(message, m.MulticastChatRequest | m.MulticastDataRequest)
    assert message.recipient_ids == [2, 3]
    assert b'"recipient_ids":[2,3]' in encode(message)  # the server writes the one spelling (S20)


def test_recipients_ids_alias_is_validated_like_the_field() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.recipient_ids\[0\]"):
        decode_client(b'{"type": "MulticastDataRequest", "game_id": 4, "data": "x", "recipients_ids": [0]}')
    with pytest.raises(msgspec.ValidationError, match="both `recipient_ids` and its alias"):
        decode_client(
            b'{"type": "MulticastChatRequest", "text": "x", "recipient_ids": [], "recipients_ids": [2]}'
        )
    with pytest.raises(msgspec.ValidationError, match="`recipients_ids`"):
        decode_client(b'{"type": "GetClocksRequest", "game_id": 4, "recipients_ids": [2]}')


def test_alias_spelled_inside_a_value_changes_nothing() -> None:
    message = decode_client(
        b'{"type": "MulticastChatRequest", "text": "recipients_ids?", "recipient_ids": [7]}'
    )
    assert message == m.MulticastChatRequest(text="recipients_ids?", recipient_ids=[7])
