"""A game's lifecycle (lifecycle.py): every move of the tables taken, every other refused, the
sets the rest of /async asks about as the tables make them, and the game's own records only
ever changed through them."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import get_args

import pytest

from parlour.protocols import async_ws
from parlour.protocols.async_ws.game.lifecycle import (
    CLOSED,
    FINISHED,
    LIVE,
    PHASES,
    PLAYED,
    STARTED,
    STATUSES,
    WATCHABLE,
    GameStatus,
    IllegalTransition,
    Phase,
)
from parlour.protocols.async_ws.game.model import AsyncGame
from parlour.protocols.async_ws.wire.messages import GameConfiguration

SOURCE = Path(async_ws.__file__).parent  # every package of /async


def game(status: GameStatus = "NOT_STARTED", phase: Phase = "TURN") -> AsyncGame:
    config = GameConfiguration(game_type="test", max_players=2)
    return AsyncGame(id=7, config=config, status=status, creator=1, created=0.0, updated=0.0, phase=phase)


def test_the_tables_cover_every_status_and_phase_of_the_wire() -> None:
    assert set(STATUSES) == set(get_args(GameStatus))
    assert set(PHASES) == set(get_args(Phase))
    assert all(after <= set(STATUSES) for after in STATUSES.values())


@pytest.mark.parametrize(("old", "new"), list(itertools.product(STATUSES, STATUSES)))
def test_a_game_enters_a_status_only_by_a_move_of_the_table(old: GameStatus, new: GameStatus) -> None:
    record = game(old)
    if new in STATUSES[old]:
        record.enter(new)
        assert record.status == new
    else:
        with pytest.raises(IllegalTransition, match=f"game 7: no move from {old} to {new}"):
            record.enter(new)
        assert record.status == old


@pytest.mark.parametrize(("old", "new"), list(itertools.product(PHASES, PHASES)))
def test_a_turn_enters_a_phase_only_by_a_move_of_the_table(old: Phase, new: Phase) -> None:
    record = game("RUNNING", old)
    if new in PHASES[old]:
        record.enter_phase(new)
        assert record.phase == new
    else:
        with pytest.raises(IllegalTransition):
            record.enter_phase(new)
        assert record.phase == old


def test_every_status_is_reached_from_not_started_and_every_one_ends() -> None:
    reached = {"NOT_STARTED"}
    for _ in STATUSES:
        reached |= {new for old in reached for new in STATUSES[old]}
    assert reached == set(STATUSES)
    assert {"OVER", "ABORTED"} == FINISHED
    assert all(STATUSES[status] for status in LIVE)


def test_the_sets_asked_about_are_those_the_text_describes() -> None:
    assert {"NOT_STARTED", "RUNNING", "OUTCOME", "ABORTING"} == LIVE
    assert {"RUNNING", "OUTCOME", "OVER", "ABORTING", "ABORTED"} == STARTED
    assert {"RUNNING", "OUTCOME", "ABORTING"} == WATCHABLE
    assert {"OUTCOME", "OVER", "ABORTING", "ABORTED"} == PLAYED
    assert {"OVER", "ABORTED", "ABORTING"} == CLOSED


def test_ending_a_phase_in_the_turn_phase_is_no_move() -> None:
    record = game("RUNNING")
    record.end_phase()
    assert record.phase == "TURN"
    record.enter_phase("SIMULTANEOUS")
    record.end_phase()
    assert record.phase == "TURN"


def test_nothing_else_assigns_a_status_or_a_phase() -> None:
    """The lifecycle is the one way: no module of /async assigns ``status`` or ``phase``
    itself (a record built whole, decoded from the store, is not a move)."""
    assigning = re.compile(r"\.(status|phase)\s*=[^=]")
    found = [
        f"{path.relative_to(SOURCE)}:{number}: {line.strip()}"
        for path in sorted(SOURCE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if assigning.search(line)
        and not line.strip().startswith(("self.status = status", "self.phase = phase"))
    ]
    assert not found, "\n".join(found)
