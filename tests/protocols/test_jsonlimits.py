"""Hostile JSON on every decoder: deep nesting and huge integers are each protocol's input error,
never a RecursionError or ValueError."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from random import Random

import pytest

from parlour.accounts.tokens import SessionTokens
from parlour.core.effects import Close, Send
from parlour.protocols.apologies_ws import ApologiesService
from parlour.protocols.async_ws.service import AsyncService
from parlour.protocols.fish_tcp import FishService
from parlour.protocols.jsonlimits import MAX_DEPTH, DepthTracker, nesting_depth, too_deep
from parlour.protocols.jsonstream import JsonStream, StreamError
from parlour.protocols.tsuro_tcp import TsuroService
from parlour.settings import Settings

DEEP = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000
HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ("[]", 1),
        ('{"a": [1, {"b": []}]}', 4),
        ('["[[[[[[", "{{{{"]', 1),  # brackets in strings do not count
        ('["\\"[[[["]', 1),  # nor after an escaped quote
        ("]]]][[", 2),  # unmatched closers are ignored
        ('["unterminated [[[[', 1),  # an incomplete string runs to the end
        (DEEP, 5000),
    ],
)
def test_nesting_depth(text: str, depth: int) -> None:
    assert nesting_depth(text) == depth
    assert nesting_depth(text.encode()) == depth


def test_too_deep_only_past_the_limit() -> None:
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert not too_deep(at_limit)
    assert too_deep("[" + at_limit + "]")
    assert too_deep(DEEP.encode())
    # Many brackets side by side are not deep.
    assert not too_deep("[" + ",".join(["[]"] * 1000) + "]")


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (DEEP.encode(), "nested more than"),
        (b"[" * 100_000, "nested more than"),  # the rest has not arrived: refused all the same
        (HUGE.encode() + b"\n", "digits"),
        (b'{"age": ' + HUGE.encode() + b"}", "digits"),
        (b"[NaN]", "NaN is not JSON"),
        (b"[-Infinity]", "-Infinity is not JSON"),
    ],
)
def test_stream_refuses_hostile_json(data: bytes, error: str) -> None:
    with pytest.raises(StreamError, match=error):
        JsonStream().feed(data)


def test_stream_depth_across_chunks() -> None:
    stream = JsonStream()
    assert stream.feed(b"[" * 40) == []
    with pytest.raises(StreamError, match="nested"):
        stream.feed(b"[" * 40)


def test_stream_still_reads_normal_values() -> None:
    stream = JsonStream()
    assert stream.feed(b'{"a": "[[[[' + b"[" * 100 + b'"}{"b": 12345678901234567890}') == [
        {"a": "[[[[" + "[" * 100},
        {"b": 12345678901234567890},
    ]


@pytest.mark.parametrize(
    "frame", [DEEP, DEEP_OBJECT, '{"message": "LIST_PLAYERS", "player_id": ' + HUGE + "}"]
)
def test_apologies_answers_invalid_request(frame: str, caplog: pytest.LogCaptureFixture) -> None:
    service = ApologiesService(Settings(), Random(1))
    service.connected(1, 0.0)
    effects = service.received(1, frame, 0.0)
    [sent] = [effect for effect in effects if isinstance(effect, Send)]
    message = json.loads(sent.data)
    assert message["message"] == "REQUEST_FAILED"
    assert message["context"]["reason"] == "INVALID_REQUEST"
    assert not any(isinstance(effect, Close) for effect in effects)
    assert not [record for record in caplog.records if record.levelname in ("ERROR", "CRITICAL")]
    assert not [record for record in caplog.records if record.exc_info]


@pytest.mark.parametrize(
    "frame", [DEEP, DEEP_OBJECT, '{"type": "PingRequest", "request_id": "a", "x": ' + HUGE + "}"]
)
def test_async_answers_bad_request(frame: str, caplog: pytest.LogCaptureFixture) -> None:
    service = AsyncService(SessionTokens(b"k" * 32, 3600.0), rng=Random(1))
    service.connected(1, 0.0)
    effects = service.received(1, frame, 0.0)
    sent = [json.loads(effect.data) for effect in effects if isinstance(effect, Send)]
    assert [message["code"] for message in sent] == ["BAD_REQUEST"]
    assert not [record for record in caplog.records if record.exc_info]


@pytest.mark.parametrize("data", [DEEP.encode(), b'{"type": "PlayerConnect", "age": ' + HUGE.encode() + b"}"])
def test_fish_refuses_with_player_connected_error(data: bytes) -> None:
    service = FishService(Settings(), Random(1))
    service.connected(1, 0.0)
    effects = service.received(1, data, 0.0)
    [sent] = [json.loads(effect.data) for effect in effects if isinstance(effect, Send)]
    assert sent["type"] == "PlayerConnected"
    assert sent["error_message"]
    assert isinstance(effects[-1], Close)


@pytest.mark.parametrize("data", [DEEP.encode(), b'{"type": "JOIN", "name": ' + HUGE.encode() + b"}"])
def test_tsuro_ejects_with_a_reason(data: bytes) -> None:
    service = TsuroService(replace(Settings(), tsuro_players=3), Random(1))
    service.connected(1, 0.0)
    effects = service.received(1, data, 0.0)
    [sent] = [json.loads(effect.data) for effect in effects if isinstance(effect, Send)]
    assert sent["type"] == "EJECTED"
    assert sent["reason"]
    assert isinstance(effects[-1], Close)


# Per-connection request rates: each protocol refuses a flood in its own words.


def test_apologies_flood_is_refused_once_then_closed() -> None:
    service = ApologiesService(replace(Settings(), requests_per_second=2.0), Random(1))
    service.connected(1, 0.0)
    frame = '{"message": "REGISTER_PLAYER", "context": {"handle": "a"}}'
    for _ in range(4):  # the burst: twice the rate
        assert service.received(1, frame, 0.0)
    effects = service.received(1, frame, 0.0)
    sent = [json.loads(effect.data) for effect in effects if isinstance(effect, Send)]
    assert [(m["message"], m["context"]["reason"]) for m in sent] == [("REQUEST_FAILED", "INVALID_REQUEST")]
    assert sent[0]["context"]["comment"] == "Too many requests: at most 2 a second"
    [close] = [effect for effect in effects if isinstance(effect, Close)]
    assert close.code == 1008
    assert service.received(1, frame, 10.0) == []  # closing: not heard any more
    # Another connection, and the same one at a steady pace, are not limited.
    service.connected(2, 0.0)
    for second in range(10):
        assert service.received(2, frame, float(second))


def test_fish_flood_is_refused_the_protocol_way() -> None:
    service = FishService(replace(Settings(), requests_per_second=0.5), Random(1))  # a burst of 1
    service.connected(1, 0.0)
    effects = service.received(1, b'{"type": "PlayerConnect", "age": 5}' * 2, 0.0)
    # Seated by the first message, kicked for the second (without a word).
    assert [json.loads(effect.data) for effect in effects if isinstance(effect, Send)] == [
        {"type": "PlayerConnected", "player_id": 0}
    ]
    assert isinstance(effects[-1], Close)
    assert 1 not in service.streams and 1 not in service.seated


def test_tsuro_flood_is_ejected_with_a_reason() -> None:
    service = TsuroService(replace(Settings(), tsuro_players=3, requests_per_second=0.5), Random(1))
    service.connected(1, 0.0)
    join = b'{"type": "JOIN", "name": "a", "strategy": "s"}'
    effects = service.received(1, join * 2, 0.0)  # the burst is one message
    sent = [json.loads(effect.data) for effect in effects if isinstance(effect, Send)]
    assert sent == [{"type": "EJECTED", "reason": "more than 0.5 messages a second"}]
    assert isinstance(effects[-1], Close)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, {"b": []}]}',
        '["[[[[[[", "{{{{", "\\\\", "\\"[[["]',
        '[[["a\\\\\\"[", [[]]]]]',
        "[" * 70,
        "[" * 64 + "]" * 64 + "[" * 64,
    ],
)
def test_depth_tracker_agrees_with_a_whole_scan_wherever_the_pieces_break(text: str) -> None:
    deep = nesting_depth(text) > MAX_DEPTH
    for cut in range(len(text) + 1):
        for step in (1, 3, len(text) + 1):
            tracker = DepthTracker()
            pieces = [text[:cut]] + [text[i : i + step] for i in range(cut, len(text), step)]
            assert all(tracker.feed(piece) for piece in pieces) is not deep, (cut, step)
            if not deep:
                assert tracker.depth == _open_depth(text)


def _open_depth(text: str) -> int:
    """Depth left open at the end, by brute force."""
    depth, string, escape = 0, False, False
    for char in text:
        if string:
            if escape:
                escape = False
            elif char == "\\":
                escape = True
            elif char == '"':
                string = False
        elif char == '"':
            string = True
        elif char in "[{":
            depth += 1
        elif char in "]}" and depth:
            depth -= 1
    return depth


def test_a_dribbled_message_is_scanned_once() -> None:
    """60 kB of brackets inside a string, sent a byte at a time: each byte is scanned once (the
    whole message again at each read would take minutes here)."""
    stream = JsonStream()
    message = b'{"a": "' + b"[" * 60_000 + b'"}'
    started = time.perf_counter()
    values = []
    for index in range(len(message)):
        values += stream.feed(message[index : index + 1])
    assert values == [{"a": "[" * 60_000}]
    assert time.perf_counter() - started < 30
