"""What the TCP fuzzers (Fish, Tsuro) share: one connection per case, its writes (split across
several ``write`` calls, or several messages in one), and what came back until the server closed.

A frame ``WAIT`` between writes waits for one line from the server first (e.g. ``PlayerConnected``
before a seated player misbehaves); ``PAUSE`` lets a moment pass, so that the writes around it
reach the server as separate segments.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fuzz.cases import Case, Tally

__all__ = ["PAUSE", "WAIT", "Exchange", "exchange", "run_cases"]

WAIT = "@wait@"
PAUSE = "@pause@"
#: How long the server may take to answer or to close before the oracle calls it a hang.
ANSWER_TIMEOUT = 8.0
#: A whole case (connect, writes, reads) within this, or the server is stuck.
CASE_TIMEOUT = 30.0


@dataclass
class Exchange:
    """What one connection received: decoded lines, and how it ended."""

    lines: list[Any] = field(default_factory=list)
    end: str = "open"  # "eof", "reset", "open" (we hung up first) or "timeout"


async def _read_line(reader: asyncio.StreamReader, got: Exchange, timeout: float) -> bool:
    """One more line into ``got``; False at the end of the stream."""
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
    except TimeoutError:
        got.end = "timeout"
        return False
    except (ConnectionResetError, BrokenPipeError):
        got.end = "reset"
        return False
    if not line:
        got.end = "eof"
        return False
    try:
        got.lines.append(json.loads(line))
    except ValueError:
        got.lines.append({"unparsable": line[:200].decode(errors="replace")})
    return True


async def exchange(port: int, case: Case, greeting: bool, until_close: bool) -> Exchange:
    """Send the case on a new connection; read until the server closes (``until_close``) or
    until one answer has come (or a moment has passed), then hang up."""
    got = Exchange()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        if greeting and not await _read_line(reader, got, ANSWER_TIMEOUT):
            return got
        try:
            for frame in case.frames:
                if frame == WAIT:
                    if not await _read_line(reader, got, ANSWER_TIMEOUT):
                        return got
                elif frame == PAUSE:
                    await asyncio.sleep(0.003)
                else:
                    writer.write(frame if isinstance(frame, bytes) else frame.encode())
                    await writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            pass  # the server hung up mid-write: read what it said before it did
        if until_close:
            while await _read_line(reader, got, ANSWER_TIMEOUT):
                pass
        else:
            # A Fish join is answered (PlayerConnected); a Tsuro one is not until its table starts.
            answered = case.expect == "joined" and not greeting
            await _read_line(reader, got, ANSWER_TIMEOUT if answered else 0.05)
            if got.end == "timeout":
                got.end = "open"
        return got
    finally:
        writer.close()
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            await writer.wait_closed()


Judge = Callable[[Case, Exchange], tuple[str, str | None]]


async def run_cases(
    port: int, work: list[Case], tally: Tally, judge: Judge, greeting: bool, workers: int = 8
) -> None:
    queue = list(reversed(work))

    async def worker() -> None:
        while queue:
            case = queue.pop()
            try:
                got = await asyncio.wait_for(
                    exchange(port, case, greeting, until_close=case.expect not in ("any", "joined")),
                    CASE_TIMEOUT,
                )
            except OSError as error:
                tally.record(case, "connect failed", f"could not connect: {error!r}")
                continue
            except TimeoutError:
                tally.record(case, "hang", f"no end within {CASE_TIMEOUT} s")
                continue
            outcome, problem = judge(case, got)
            tally.record(case, outcome, problem)

    await asyncio.gather(*(worker() for _ in range(workers)))
