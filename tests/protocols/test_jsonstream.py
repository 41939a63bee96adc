"""The TCP stream reader's handling of bytes that are not UTF-8 and of numbers no message holds
(protocols/jsonstream.py); depth and digit limits are in test_jsonlimits.py."""

from __future__ import annotations

import pytest

from parlour.protocols.jsonstream import JsonStream, StreamError


@pytest.mark.parametrize(
    "data",
    [
        b"\xc0\x80\n",  # an overlong NUL: never valid, even with more bytes after it
        b"\xc0",  # the same, alone at the end of what has arrived
        b"\xff\xfe{}\n",
        b"\xed\xa0\x80\n",  # an encoded surrogate
        b"\xed\xa0",  # its beginning is already invalid (ED takes 80-9F next)
        b"\xe0\x80",  # the beginning of an overlong form
        b"\xf0\x80",
        b"\xf4\x90",  # the beginning of a code point past U+10FFFF
        b'{"a":"\x80"}\n',  # a continuation byte with no start
        b'{"a":"\xe2\x28\xa1"}',  # a start byte followed by a non-continuation
        b"\xf5\x80\x80\x80",  # past U+10FFFF
    ],
)
def test_invalid_utf8_is_refused_at_once(data: bytes) -> None:
    with pytest.raises(StreamError, match="not UTF-8"):
        JsonStream().feed(data)


@pytest.mark.parametrize("character", ["é", "€", "😀"])
def test_a_character_cut_between_reads_waits_for_its_rest(character: str) -> None:
    encoded = f'{{"name":"{character}"}}\n'.encode()
    start = encoded.index(character.encode())
    for cut in range(start + 1, start + len(character.encode())):
        stream = JsonStream()
        assert stream.feed(encoded[:cut]) == []
        assert stream.feed(encoded[cut:]) == [{"name": character}]


def test_a_character_fed_byte_by_byte() -> None:
    stream = JsonStream()
    values = [value for byte in '["😀", "ok"]'.encode() for value in stream.feed(bytes([byte]))]
    assert values == [["😀", "ok"]]


@pytest.mark.parametrize("number", ["1e99999", "-1e400", "1.5e308000", "0." + "0" * 5000 + "1"])
def test_numbers_out_of_range_or_padded_are_refused(number: str) -> None:
    with pytest.raises(StreamError, match="number"):
        JsonStream().feed(f'{{"age":{number}}}\n'.encode())


def test_ordinary_fractions_still_read() -> None:
    assert JsonStream().feed(b'{"x":1.5,"y":-2e3}\n') == [{"x": 1.5, "y": -2000.0}]
