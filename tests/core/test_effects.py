"""The effects a service returns: Broadcast is one of them, beside Send, Close and Store."""

from __future__ import annotations

import typing

from parlour.core.effects import Broadcast, Close, Effect, Send, Store


def test_broadcast_is_an_effect_with_its_recipients_and_one_message() -> None:
    assert Broadcast in typing.get_args(Effect)
    assert {Send, Close, Store} <= set(typing.get_args(Effect))
    effect = Broadcast([3, 1, 2], b'{"type":"ClientChatRequest"}')
    assert effect.conns == [3, 1, 2] and effect.data == b'{"type":"ClientChatRequest"}'
    assert effect == Broadcast([3, 1, 2], b'{"type":"ClientChatRequest"}')
    assert effect != Broadcast([1, 2, 3], b'{"type":"ClientChatRequest"}')  # the order is the send order
