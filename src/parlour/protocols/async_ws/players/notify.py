"""Push notifications (the Scalable Server text "Push Notifications"; docs/async-decisions.md
S16, S20): what is said to the devices of a player who is not there.

A game says when to notify whom (game/outbound.py, through game/host.py); each notification is built
here, one ``NotificationRow`` per device linked to the account
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
from typing import Final

import msgspec

from parlour.protocols.async_ws.game.host import Notice
from parlour.protocols.async_ws.players.devices import linked
from parlour.protocols.async_ws.state.hub import Hub
from parlour.storage.records import NotificationRow

__all__ = [
    "ACTIONS",
    "Kind",
    "notify",
]

#: The text's type table (the notifications a game asks for, game/host.py).
Kind = Notice
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
