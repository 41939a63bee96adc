"""Simultaneous turns, interruptions and multicast (the Scalable Server text "Simultaneous Game
Turn", "Pausing Clock in a simultaneous turn", "Interruptions", "Multicast"; docs/async-decisions.md
S9, S10, S20).

A game is in one of three phases (``AsyncGame.phase``, game/model.py): ``TURN`` (including the merge
turn that follows the two others), ``SIMULTANEOUS`` or ``INTERRUPTION``; the game lives them
(game/phases.py) and checks their requests (game/checks.py); their requests are rows of
game_requests.py's table, and this module names them for the service.
Only ``rules: "client"`` games enter them: with a rules plugin (S9) Parlour orders the turns
itself, and asking for either is a ``BAD_REQUEST``.

Where the text is silent, Parlour decides:

* ``simultaneous_players`` must be non-empty, name seats of the game, and name each once;
  ``simultaneous_players`` without ``next_simultaneous`` (and ``interruption_players`` without a
  window) is refused too (``BAD_REQUEST``, the text's "simultaneous_players are invalid").
  A commit that begins a simultaneous turn, like a merge, may leave out ``next_players``: the
  current ones are kept (the merger is chosen from them).
* A simultaneous seat that a robot must play, or whose player is not connected when the turn
  begins, is asked of a client with ``PlayerTimeoutRequest(expected="UpdateUserDataRequest")``
  (status ``ROBOT``, ``FORFEITED``, ``TIMED_OUT`` or ``ABSENT``), chosen as for any robot turn
  (the last committer, then ``next_players`` order, present players first). An absent player
  who comes back gets its ``UserDataUpdateRequiredRequest`` and may still answer: the first
  answer for a seat wins, a second gets ``NOT_YOUR_TURN`` (as for the idle timer's race).
* Clocks: each simultaneous seat's clock runs from the start of the phase (after its pause)
  until it has given its user data, which also earns it the clock increment. The idle timer
  counts from the same start and reports the seats that still owe data and were not handed to
  someone else; at 100 % each of them is handed over (status ``IDLE``). An exhausted clock
  replaces the player (``PlayerReplacedRequest``) and hands the seat over (``TIMED_OUT``).
* Merger (both kinds of merge): the first of ``next_players`` if present or played by a robot
  (an invited robot, a forfeiter, a player out of time: then ``PlayerTimeoutRequest`` with the
  data, as on any robot turn); otherwise the first present active player of the phase (the
  simultaneous seats in their order; the interrupters in the order they interrupted, then the
  committer); with nobody present, the first of ``next_players`` still (it gets its turn when
  it comes back). The merge keeps the turn index of the commit that opened the phase (S20: one
  index per commit; the interruption diagram's ``turn_index=3`` is the same drawing slip).
* Interruptions: the committer gets its ``ActionCommitedRequest`` (the direct reply) and then,
  like every player and observer, the window's ``GameStateUpdatedRequest``. The window lasts at
  most :data:`MAX_WINDOW_MS`; the committer may not interrupt its own action. Only active
  humans may interrupt (``InterruptActionRequest`` has no ``player_id`` to play a robot's
  part), each at most once. ``no_more_interruption=true`` is its sender's answer "I will not
  interrupt" (its ``interruption_data`` is ignored; no reply is sent): one interrupter cannot
  take the chance away from the others, but the window closes as soon as every interrupter
  who can answer has answered (interrupted or declined), or at once if none can. Refusals are
  ``InterruptActionErrorRequest``: ``WINDOW_CLOSED`` (no window open for that ``turn_index``),
  ``NOT_ALLOWED`` (not an interrupter, no longer active, or ``turn`` is not the interrupted
  seat), ``ALREADY_INTERRUPTED`` (this interrupter already answered). A commit's ``pause_time``
  applies to the turn that begins when the window closes.
* Multicast: any active player of a live game may send; ``recipient_ids`` must be seats of the
  game; the sender always gets its copy first, then each connected player among the recipients
  (all seats when empty). Observers get nothing: the data is the players'. Nothing is stored.
"""

from __future__ import annotations

from typing import Final

from parlour.protocols.async_ws.game.checks import MAX_WINDOW_MS
from parlour.protocols.async_ws.ingame.game_requests import handlers
from parlour.protocols.async_ws.state.hub import Handler

__all__ = ["MAX_WINDOW_MS", "PHASE_HANDLERS"]

#: The handlers of this module, by message type, for the service's table.
PHASE_HANDLERS: Final[dict[str, Handler]] = handlers(
    "UpdateUserDataRequest", "InterruptActionRequest", "MulticastDataRequest"
)
