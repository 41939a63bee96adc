"""Where robots think (``Think`` effects): a process of their own, whose answers come back to
the event loop as inputs of their own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial

from parlour.core.effects import Effect, Think
from parlour.core.service import Service

__all__ = ["Answer", "Thinker"]

log = logging.getLogger("parlour.transport")

#: Told on the event loop, with the Think's token, once its job has an answer (or failed).
Answer = Callable[[Service | None, tuple[str, int], "Future[int]"], None]


class Thinker:
    """Starts each Think's job in the robots' process, started with the first of them.

    A job carries copies of what it reads, so it needs no lock; its answer comes back on the
    loop as an input of its own (``answer``), after everything before it. A process rather than
    a thread: a thread would share the interpreter lock with the event loop, and a thinking robot
    would still slow everyone down (measured: bench/server.py --robot-latency). One process, so
    the loop keeps a core of its own on a small machine."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self._pool: ProcessPoolExecutor | None = None

    def start(self, effects: list[Effect], service: Service | None) -> list[Effect]:
        """Start the Thinks of ``effects`` (asked on behalf of ``service``); the other effects,
        to carry out."""
        if self._pool is None:
            self._pool = _robots_process()
        loop = asyncio.get_running_loop()
        rest: list[Effect] = []
        for effect in effects:
            if type(effect) is Think:
                future: Future[int]
                try:
                    future = self._pool.submit(effect.job)
                except (BrokenProcessPool, RuntimeError) as error:
                    # The robots' process died: a new one for the next decisions; this one is
                    # the server's robot's to play, on the next turn of the loop.
                    log.error("the robots' process is gone; starting another: %s", error)
                    self._pool.shutdown(wait=False)
                    self._pool = _robots_process()
                    future = Future()
                    future.set_exception(error)
                future.add_done_callback(partial(self._back, loop, service, effect.token))
            else:
                rest.append(effect)
        return rest

    def _back(
        self,
        loop: asyncio.AbstractEventLoop,
        service: Service | None,
        token: tuple[str, int],
        done: Future[int],
    ) -> None:
        """In the executor's thread: hand the answer to the loop."""
        with contextlib.suppress(RuntimeError):  # the loop has closed (shutdown): not needed
            loop.call_soon_threadsafe(self.answer, service, token, done)

    def shutdown(self) -> None:
        """Stop the robots' process: a decision still on its way is not needed any more."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def _robots_process() -> ProcessPoolExecutor:
    """The process robots think in: spawned, so it shares nothing with the server, and at a
    lower priority, so that on a busy machine the event loop gets a core first and a thinking
    robot never slows the humans' requests down."""
    return ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn"), initializer=_lower_priority
    )


def _lower_priority() -> None:
    with contextlib.suppress(OSError, AttributeError):  # AttributeError: no os.nice (Windows)
        os.nice(10)
