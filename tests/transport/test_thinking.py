"""Slow robots decide away from the event loop: a Think effect runs in the robots' process while
the loop goes on, and its answer comes back to the service as an input of its own."""

from __future__ import annotations

import asyncio
import os
import time

from parlour.core.effects import Effect, Think
from parlour.core.records import GameState
from parlour.robots.levels import level_robot
from parlour.transport.runtime import Runtime
from tests.protocols.apologies_ws.harness import Server


class Thinker:
    """A service that only answers thoughts."""

    def __init__(self) -> None:
        self.answers: list[tuple[tuple[str, int], int | None]] = []
        self.done = asyncio.Event()

    def thought(self, token: tuple[str, int], choice: int | None, now: float) -> list[Effect]:
        self.answers.append((token, choice))
        self.done.set()
        return []


def slow_pid() -> int:
    """A robot taking its time; it answers with the id of the process it ran in."""
    time.sleep(0.3)
    return os.getpid()


def niceness() -> int:
    return os.nice(0)


def failing() -> int:
    raise ValueError("no move")


def test_a_think_runs_in_another_process_while_the_loop_goes_on() -> None:
    async def main() -> None:
        runtime = Runtime(clock=lambda: 5.0)
        service = Thinker()
        try:
            runtime.execute([Think(("g", 1), slow_pid)], service)  # type: ignore[arg-type]
            ticks = 0
            while not service.answers:  # the loop keeps turning while the robot thinks
                await asyncio.sleep(0.01)
                ticks += 1
            assert ticks >= 10
            token, pid = service.answers[0]
            assert token == ("g", 1) and pid != os.getpid()
            service.done.clear()
            runtime.execute([Think(("g", 2), failing)], service)  # type: ignore[arg-type]
            await asyncio.wait_for(service.done.wait(), 30)
            assert service.answers[-1] == (("g", 2), None)  # the server's robot plays instead
        finally:
            await runtime.close_store()

    asyncio.run(main())


def test_hard_robots_in_the_apologies_lobby_answer_through_thoughts() -> None:
    """With offloading on, a hard robot's turn waits for its Think's answer; the answer plays
    the move the robot chose, a stale or repeated answer changes nothing."""
    server = Server(seed=3, robot="hard")
    server.service.lobby.turns.offload = True
    thinks: list[Think] = []
    take = server._take

    def taking(effects: list[Effect]) -> None:
        thinks.extend(e for e in effects if isinstance(e, Think))
        take([e for e in effects if not isinstance(e, Think)])

    server._take = taking  # type: ignore[method-assign]
    alice = server.connect(1)
    alice.register("alice")
    game_id = alice.advertise(players=4)[0]["context"]["game_id"]
    alice.request("START_GAME")
    game = server.service.lobby.games[game_id]
    assert server.service.lobby.turns.robot_for(game) is level_robot("apologies", "hard")
    answered = 0
    while game.state is GameState.PLAYING and answered < 25:
        if thinks:
            think = thinks.pop(0)
            assert not thinks and game.thinking == think.token
            moves = len(game.times)
            assert moves == think.token[1]
            choice = think.job()
            assert len(game.times) == moves  # thinking changed nothing
            server._take(server.service.thought(think.token, choice, server.now))
            assert len(game.times) > moves  # the robot's move was played
            server._take(server.service.thought(think.token, choice, server.now))  # stale: ignored
            answered += 1
            continue
        turn = server.last_turn()
        assert turn is not None and turn[0] == alice.conn, "nobody is to move"
        alice.request("EXECUTE_MOVE", {"move_id": sorted(turn[1]["context"]["moves"])[0]})
    assert answered == 25 or game.state is not GameState.PLAYING


def dies() -> int:
    """A robot whose process dies under it (as a crash, or an object that does not unpickle)."""
    os._exit(3)


def test_a_robots_process_that_dies_is_replaced_and_the_server_robot_plays() -> None:
    async def main() -> None:
        runtime = Runtime(clock=lambda: 5.0)
        service = Thinker()
        try:
            runtime.execute([Think(("g", 1), dies)], service)  # type: ignore[arg-type]
            await asyncio.wait_for(service.done.wait(), 30)
            assert service.answers == [(("g", 1), None)]  # the server's robot plays instead
            service.done.clear()
            # The pool is broken now: the next decision starts another process.
            runtime.execute([Think(("g", 2), failing)], service)  # type: ignore[arg-type]
            await asyncio.wait_for(service.done.wait(), 30)
            service.done.clear()
            runtime.execute([Think(("g", 3), slow_pid)], service)  # type: ignore[arg-type]
            await asyncio.wait_for(service.done.wait(), 30)
            assert service.answers[1] == (("g", 2), None)
            token, pid = service.answers[2]
            assert token == ("g", 3) and pid != os.getpid()
        finally:
            await runtime.close_store()

    asyncio.run(main())


def test_fish_tsuro_and_async_robots_think_in_the_robots_process() -> None:
    """Each path's Think, run by the runtime: the move is not played while the runtime's robots'
    process thinks (the loop goes on), then its answer comes back to the service that asked,
    which plays it."""
    from tests.protocols.async_ws.test_thinking import Thinking, ann_moves, robots_game, rules_of
    from tests.protocols.fish_tcp.test_fish_service import Tables as FishTables
    from tests.protocols.test_streamed_thinking import offloaded, only
    from tests.protocols.tsuro_tcp.test_tsuro_service import Tables as TsuroTables

    fish = FishTables(2, fish_robot="hard", fish_wait=30)
    fish_thinks = offloaded(fish)
    fish.join(1, age=50)
    fish.now += 30
    fish.take(fish.service.tick(fish.now))
    tsuro = TsuroTables(3, tsuro_robot="hard", tsuro_wait=30)
    tsuro_thinks = offloaded(tsuro)
    tsuro.join(1)
    tsuro.join(2)
    tsuro.now += 30
    tsuro.take(tsuro.service.tick(tsuro.now))  # the robot sits third
    for conn in (1, 2):
        tsuro.send(conn, tsuro.request(conn))
    h = Thinking()
    ann, _, game_id = robots_game(h, "tsuro", robots=1)
    ann_moves(h, ann, game_id)

    def moves() -> list[int]:
        return [
            fish.service.tables[0].log.moves,  # type: ignore[union-attr]
            tsuro.service.tables[0].log.moves,  # type: ignore[union-attr]
            len(rules_of(h, game_id).actions),
        ]

    async def main() -> None:
        runtime = Runtime(clock=lambda: 5.0)
        try:
            before = moves()
            runtime.execute([only(fish_thinks)], fish.service)
            runtime.execute([only(tsuro_thinks)], tsuro.service)
            runtime.execute([h.take()], h.service)
            assert moves() == before  # asked, not played
            for _ in range(3000):
                if all(after > then for after, then in zip(moves(), before, strict=True)):
                    break
                await asyncio.sleep(0.01)
            assert [after - then for after, then in zip(moves(), before, strict=True)] == [1, 1, 1]
            # The robots' process yields the machine to the server's loop on a busy machine.
            thinker = Thinker()
            runtime.execute([Think(("g", 1), niceness)], thinker)  # type: ignore[arg-type]
            await asyncio.wait_for(thinker.done.wait(), 30)
            assert thinker.answers[0][1] == min(19, os.nice(0) + 10)
        finally:
            await runtime.close_store()

    asyncio.run(main())
