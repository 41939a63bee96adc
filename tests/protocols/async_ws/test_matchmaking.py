"""Quick play's queues without a server (matchmaking.py): the clock is a number the test moves."""

from __future__ import annotations

from parlour.protocols.async_ws.state.matchmaking import MAX_QUEUES, Matchmaker, QueueKey, Widening

FISH = QueueKey("fish", 2, False)
TSURO = QueueKey("tsuro", 2, False)
FISH4 = QueueKey("fish", 4, False)
NOW = 1000.0


def players(matches: list) -> list[tuple[int, ...]]:
    return [tuple(ticket.player_id for ticket in match.tickets) for match in matches]


def test_equal_ratings_match_at_once_and_leave_the_queue() -> None:
    mm = Matchmaker()
    mm.join(1, FISH, 25.0, None, NOW)
    assert mm.match(NOW, everywhere=False) == []
    mm.join(2, FISH, 25.0, None, NOW + 1)
    [match] = mm.match(NOW + 1, everywhere=False)
    assert (match.key, players([match]), match.robots) == (FISH, [(1, 2)], 0)  # longest wait first
    assert len(mm) == 0 and mm.waiting(FISH) == 0


def test_the_window_widens_with_the_wait_until_it_holds_the_partner() -> None:
    widening = Widening(base=2.0, per_second=0.5, widest=10.0)
    mm = Matchmaker(widening)
    mm.join(1, FISH, 20.0, None, NOW)
    mm.join(2, FISH, 25.0, None, NOW)  # 5 apart: the windows (2 wide) do not reach
    assert mm.match(NOW) == []
    [ticket] = mm.tickets(1)
    assert mm.window(ticket, NOW) == (18.0, 22.0)
    assert mm.window(ticket, NOW + 4) == (16.0, 24.0)
    assert mm.match(NOW + 5.9) == []  # 2 + 0.5 x 5.9 = 4.95 < 5
    assert players(mm.match(NOW + 6)) == [(1, 2)]  # 2 + 0.5 x 6 = 5
    assert mm.window(ticket, NOW + 1000) == (10.0, 30.0)  # never past ``widest``


def test_the_nearest_rating_is_taken_and_the_others_wait() -> None:
    mm = Matchmaker(Widening(base=5.0, per_second=0.0))
    mm.join(1, FISH, 25.0, None, NOW)
    mm.join(2, FISH, 29.0, None, NOW + 1)
    mm.join(3, FISH, 24.0, None, NOW + 2)
    mm.join(4, FISH, 40.0, None, NOW + 3)
    assert players(mm.match(NOW + 3)) == [(1, 3)]
    assert sorted(mm.players()) == [2, 4]  # 11 apart, a window of 5 that never widens


def test_four_seats_wait_for_four_players() -> None:
    mm = Matchmaker()
    for player in (1, 2, 3):
        mm.join(player, FISH4, 25.0, None, NOW)
    assert mm.match(NOW + 100) == []
    mm.join(4, FISH4, 26.0, None, NOW + 101)
    [match] = mm.match(NOW + 101, everywhere=False)
    assert sorted(players([match])[0]) == [1, 2, 3, 4] and match.robots == 0


def test_leaving_one_queue_or_all() -> None:
    mm = Matchmaker()
    mm.join(1, FISH, 25.0, None, NOW)
    mm.join(1, TSURO, 25.0, None, NOW)
    mm.join(1, FISH4, 25.0, None, NOW)
    assert [ticket.key for ticket in mm.leave(1, "fish", seats=4)] == [FISH4]
    assert mm.leave(1, "fish", seats=4) == []  # not in it any more
    assert [ticket.key for ticket in mm.tickets(1)] == [FISH, TSURO]
    assert [ticket.key for ticket in mm.leave(1)] == [FISH, TSURO]
    assert len(mm) == 0 and mm.waiting(FISH) == mm.waiting(TSURO) == 0
    mm.join(2, FISH, 25.0, None, NOW)
    assert mm.match(NOW) == []  # player 1 left: nobody to pair with


def test_one_match_ends_every_other_queue_of_its_players() -> None:
    mm = Matchmaker()
    mm.join(1, FISH, 25.0, None, NOW)
    mm.join(1, TSURO, 25.0, None, NOW)
    mm.join(2, TSURO, 25.0, None, NOW + 1)
    mm.join(2, FISH, 25.0, None, NOW + 1)
    matches = mm.match(NOW + 1)
    assert len(matches) == 1  # not a game of each: one game for the two of them
    [match] = matches
    assert players(matches) == [(1, 2)]
    assert {ticket.key for ticket in match.ended} == {FISH, TSURO} - {match.key}
    assert len(mm) == 0 and mm.waiting(FISH) == mm.waiting(TSURO) == 0


def test_robots_fill_the_seats_after_the_chosen_wait_never_before() -> None:
    mm = Matchmaker(Widening(base=1.0, per_second=0.0))
    mm.join(1, FISH4, 25.0, 30, NOW)
    mm.join(2, FISH4, 25.5, 60, NOW + 10)  # in the window, but waits for robots longer
    mm.join(3, FISH4, 40.0, 0, NOW + 10)  # robots at once, but far outside the window
    mm.join(4, FISH4, 25.0, None, NOW + 10)  # never with robots
    first = mm.match(NOW + 10)
    assert players(first) == [(3,)] and first[0].robots == 3  # robots at once, alone in its window
    assert mm.match(NOW + 29.9) == []
    [match] = mm.match(NOW + 30)
    assert players([match]) == [(1,)] and match.robots == 3  # 2 waits for robots until NOW + 70
    [match] = mm.match(NOW + 70)
    assert players([match]) == [(2,)] and match.robots == 3
    assert mm.match(NOW + 10_000) == [] and list(mm.players()) == [4]  # never robots


def test_refusals_and_put_back() -> None:
    mm = Matchmaker()
    mm.join(1, FISH, 25.0, None, NOW)
    assert mm.refusal(1, FISH) is not None and mm.refusal(1, FISH)[0] == "ALREADY_QUEUED"
    assert mm.refusal(2, FISH) is None
    for seats in range(2, 2 + MAX_QUEUES - 1):
        mm.join(1, QueueKey("tsuro", seats, False), 25.0, None, NOW)
    assert mm.refusal(1, QueueKey("apologies", 2, False)) == (
        "TOO_MANY_OFFERS",
        f"you are waiting in {MAX_QUEUES} queues already",
    )
    mm.join(2, FISH, 25.0, None, NOW + 5)
    [match] = mm.match(NOW + 5)
    assert len(match.ended) == MAX_QUEUES - 1 and len(mm) == 0
    mm.put_back(match.tickets + match.ended)  # the game could not be made: all wait again
    assert len(mm.tickets(1)) == MAX_QUEUES and mm.tickets(1)[0].since == NOW  # wait kept
    assert players(mm.match(NOW + 5)) == [(1, 2)]


def test_status_is_due_every_interval_and_clear_ends_everything() -> None:
    mm = Matchmaker()
    mm.join(1, FISH, 25.0, None, NOW)
    mm.join(2, TSURO, 25.0, None, NOW)
    assert sorted(mm.due(NOW, 5.0)) == [1, 2]
    mm.told(1, NOW + 3)
    assert mm.due(NOW + 4, 5.0) == []
    assert mm.due(NOW + 5, 5.0) == [2]
    assert sorted(mm.clear()) == [1, 2]
    assert len(mm) == 0 and mm.match(NOW + 6) == []
