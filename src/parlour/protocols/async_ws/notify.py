"""Push notifications (scalable-server-protocol.rst "Push Notifications"; scalable-server-notes.md
S16, S20): what is said to the devices of a player who is not there.

Each notification is built here, one ``NotificationRow`` per device linked to the account
(devices.py), and stored with the rest of the input (``hub.store``): the store's table is the
outbox, which the notifier (parlour.transport.notifier) POSTs to the deployment's webhook, at least
once, with the row's id as the idempotency key. Apple, Google and Steam cannot be reached from
here; the webhook's owner relays the payload to them.

The payload is the text's "Format of a push notification", as JSON (S20: the type table's
action_key, localized_key and localized_args are the payload's ``action-loc-key``, ``loc-key`` and
``loc-args``)::

    {"id": "<idempotency key>", "action-loc-key": "YOUR_TURN_ACTION", "loc-key": "YOUR_TURN",
     "loc-args": [], "async": {"game_id": 7, "type": "YOUR_TURN", "player_id": 3, "turn_index": 4},
     "device_type": "FCM", "token": "<the device's token>"}

``async`` is the text's GameNotification (game id, event type, the recipient's global id, the
current turn index); ``device_type`` and ``token`` tell the webhook where to push it.

Only players who are not connected are notified: a connected client already gets the websocket
message that says the same (its turn, an invitation, an outcome), and a push on top of it would
be a duplicate on the same device. A player who signed out (or whose connection dropped) is
notified until it signs in again.

Without a store there is no outbox: the rows are produced and dropped with the other records,
and nothing is sent (the notifier is started only with a store).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Final, Literal

import msgspec

from parlour.protocols.async_ws.devices import linked
from parlour.protocols.async_ws.hub import Hub
from parlour.protocols.async_ws.model import AsyncGame, SeatInfo
from parlour.storage.records import NotificationRow

__all__ = [
    "ACTIONS",
    "Kind",
    "client_data",
    "game_over",
    "invitation_answered",
    "invited",
    "notify",
    "robot_turn",
    "your_turn",
]

#: The text's type table.
Kind = Literal[
    "YOUR_TURN",
    "YOUR_TURN_INVITE",
    "YOUR_TURN_ROBOT",
    "CONFIRM_INVITATION",
    "INVITEE_ACCEPTED",
    "INVITEE_DECLINED",
    "GAME_OVER",
    "CLIENT_DATA",
]
#: Each type's action_key (``action-loc-key``); its localized_key (``loc-key``) is the type itself.
ACTIONS: Final[dict[Kind, str]] = {
    "YOUR_TURN": "YOUR_TURN_ACTION",
    "YOUR_TURN_INVITE": "YT_INVITE_ACTION",
    "YOUR_TURN_ROBOT": "YT_ROBOT_ACTION",
    "CONFIRM_INVITATION": "INVITATION_ACTION",
    "INVITEE_ACCEPTED": "INVITEE_ACCEPTED_ACTION",
    "INVITEE_DECLINED": "INVITEE_DECLINED_ACTION",
    "GAME_OVER": "GAME_OVER_ACTION",
    # Parlour's own: a MulticastDataRequest's ``notification`` for absent recipients (the text
    # allows it without giving it a row); its loc-key is the client's notification text.
    "CLIENT_DATA": "CLIENT_DATA_ACTION",
}


def notify(
    hub: Hub,
    player_id: int,
    kind: Kind,
    game_id: int,
    turn_index: int,
    args: Sequence[str],
    now: float,
    loc_key: str | None = None,
) -> int:
    """Queue a notification of ``kind`` to every device linked to ``player_id`` if that player
    is not connected; how many were queued. ``args`` are the ``loc-args`` (the table's
    localized_args)."""
    if player_id in hub.online:
        return 0  # the websocket message says it already
    devices = linked(hub, player_id)
    for device_type, token in devices:
        # A random id, not one from the hub's seeded rng: a receiver drops a repeated id, so two
        # notifications must never share one, across restarts too.
        notification_id = uuid.uuid4().hex
        payload = msgspec.json.encode(
            {
                "id": notification_id,
                "action-loc-key": ACTIONS[kind],
                "loc-key": loc_key or kind,
                "loc-args": list(args),
                "async": {
                    "game_id": game_id,
                    "type": kind,
                    "player_id": player_id,
                    "turn_index": turn_index,
                },
                "device_type": device_type,
                "token": token,
            }
        )
        hub.store(
            NotificationRow(
                id=notification_id,
                account_id=player_id,
                device_type=device_type,
                token=token,
                payload=payload,
                created=now,
                attempts=0,
                next_attempt=now,
                delivered=None,
            )
        )
    return len(devices)


# -- The moments the workflows notify ---------------------------------------------------------------


def your_turn(hub: Hub, game: AsyncGame, seat: SeatInfo, now: float) -> int:
    """``seat`` is asked to play (ActionRequiredRequest): YOUR_TURN, or YOUR_TURN_INVITE with the
    inviter's name in a game created by invitation. The inviter itself gets YOUR_TURN: its own
    name would tell it nothing."""
    if seat.player_id is None or seat.robot:
        return 0
    inviter = game.invited_by
    if inviter is not None and inviter != seat.player_id:
        return notify(
            hub, seat.player_id, "YOUR_TURN_INVITE", game.id, game.turn_index, [hub.name(inviter)], now
        )
    return notify(hub, seat.player_id, "YOUR_TURN", game.id, game.turn_index, [], now)


def robot_turn(hub: Hub, game: AsyncGame, delegate_seat: SeatInfo, now: float) -> int:
    """``delegate_seat`` is asked to play another seat's turn (PlayerTimeoutRequest): YOUR_TURN_ROBOT
    (the text's "Robots" workflow: when no candidate is connected, the chosen one is notified)."""
    if delegate_seat.player_id is None or delegate_seat.robot:
        return 0
    return notify(hub, delegate_seat.player_id, "YOUR_TURN_ROBOT", game.id, game.turn_index, [], now)


def invited(hub: Hub, game: AsyncGame, invitee_id: int, now: float) -> int:
    """An invitation waits for ``invitee_id``'s answer: CONFIRM_INVITATION with the inviter's name."""
    inviter = game.invited_by if game.invited_by is not None else game.creator
    return notify(hub, invitee_id, "CONFIRM_INVITATION", game.id, game.turn_index, [hub.name(inviter)], now)


def invitation_answered(hub: Hub, game: AsyncGame, invitee_id: int, accepted: bool, now: float) -> int:
    """``invitee_id`` accepted or declined: INVITEE_ACCEPTED / INVITEE_DECLINED to the inviter,
    with the invitee's name."""
    inviter = game.invited_by if game.invited_by is not None else game.creator
    if inviter == invitee_id:
        return 0
    kind: Kind = "INVITEE_ACCEPTED" if accepted else "INVITEE_DECLINED"
    return notify(hub, inviter, kind, game.id, game.turn_index, [hub.name(invitee_id)], now)


def game_over(hub: Hub, game: AsyncGame, now: float) -> int:
    """The outcome is there (OUTCOME): GAME_OVER to every human of the game who is not connected
    (forfeited and timed-out seats too: every human must confirm the outcome)."""
    sent = 0
    for seat in game.seats:
        if seat.player_id is not None and not seat.robot:
            sent += notify(hub, seat.player_id, "GAME_OVER", game.id, game.turn_index, [], now)
    return sent


def client_data(hub: Hub, game: AsyncGame, player_id: int, text: str, now: float) -> int:
    """A MulticastDataRequest asked to tell absent recipients ``text`` (CLIENT_DATA)."""
    return notify(hub, player_id, "CLIENT_DATA", game.id, game.turn_index, (), now, loc_key=text)
