"""One fuzz run: a server with every listener, every protocol's cases sent at once over real
sockets while a well-behaved client per protocol keeps playing, then the server-wide oracle: no
traceback or ERROR line in its log, ``parlour db check`` passing on its store after it stopped,
and its RSS at the end close to its RSS after the first 10% of the frames."""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.fuzz import apologies, asyncws, fish, tsuro, web
from tests.fuzz.cases import Case, Tally
from tests.fuzz.server import FuzzServer, db_check, fuzz_server, log_problems

__all__ = ["PROTOCOLS", "Report", "fuzz"]

PROTOCOLS = ("apologies", "async", "fish", "tsuro", "http")
#: RSS may grow this much from the 10% mark to the end (caches filling, allocator arenas)
#: before the oracle calls it a leak.
RSS_SLACK_KIB = 16 * 1024
RSS_FACTOR = 1.15


@dataclass
class Report:
    seed: int
    frames: int
    tallies: list[Tally]
    seconds: float = 0.0
    rss_early_kib: int = 0
    rss_end_kib: int = 0
    log_problems: list[str] = field(default_factory=list)
    db_status: int = 0
    db_output: str = ""
    exit_code: int | None = None

    def failures(self) -> list[str]:
        out = [failure for tally in self.tallies for failure in tally.failures]
        out += [f"server log: {line}" for line in self.log_problems]
        if self.db_status != 0:
            out.append(f"parlour db check failed: {self.db_output[-500:]}")
        if self.rss_early_kib and self.rss_end_kib > self.rss_early_kib * RSS_FACTOR + RSS_SLACK_KIB:
            out.append(f"RSS grew from {self.rss_early_kib} KiB to {self.rss_end_kib} KiB")
        if self.exit_code not in (0, None):
            out.append(f"the server exited with {self.exit_code} on SIGTERM")
        return out

    def lines(self) -> list[str]:
        out = [f"fuzz seed {self.seed}: {self.frames} frames per protocol in {self.seconds:.1f} s"]
        for tally in self.tallies:
            out += tally.lines()
        out.append(
            f"server RSS after 10%: {self.rss_early_kib / 1024:.1f} MiB, at the end: "
            f"{self.rss_end_kib / 1024:.1f} MiB"
        )
        out.append(
            f"server log: {len(self.log_problems)} traceback/ERROR lines; db check exit {self.db_status}"
        )
        failures = self.failures()
        out.append(f"{len(failures)} oracle failures" + (":" if failures else ""))
        shown = failures[:40]
        out += [f"  {failure}" for failure in shown]
        if len(failures) > len(shown):
            out.append(f"  ... and {len(failures) - len(shown)} more")
        out.append(f"replay with: --seed {self.seed} --frames {self.frames}")
        return out


Runner = Callable[[int, list[Case], Tally, asyncio.Event], Awaitable[None]]
Probe = Callable[[int, Tally, asyncio.Event], Awaitable[None]]


def _plan(server: FuzzServer, name: str, seed: int, frames: int) -> tuple[int, list[Case], Runner, Probe]:
    """The port, the cases (from a random source of the protocol's own, so that one protocol's
    cases do not depend on which others run), the runner and the well-behaved client."""
    rng = random.Random(f"{seed}:{name}")
    if name == "apologies":
        return server.port, apologies.cases(rng, frames), apologies.run, apologies.probe
    if name == "async":
        schema = asyncws.fetch_schema(server.port)
        return server.port, asyncws.cases(rng, frames, schema), asyncws.run, asyncws.probe
    if name == "fish":
        return server.fish_port, fish.cases(rng, frames), fish.run, fish.probe
    if name == "tsuro":
        return server.tsuro_port, tsuro.cases(rng, frames), tsuro.run, tsuro.probe
    if name == "http":
        return server.port, web.cases(rng, frames), web.run, web.probe
    raise ValueError(f"no protocol {name!r}; choose from {', '.join(PROTOCOLS)}")


async def _guarded(name: str, tally: Tally, work: Awaitable[None]) -> None:
    """A fuzz client that fails outright is an oracle failure, not the end of the run."""
    try:
        await work
    except Exception as error:
        tally.fail(f"{name} stopped: {error!r}")


async def _run(server: FuzzServer, report: Report, protocols: Sequence[str], progress: bool) -> None:
    plans = {name: _plan(server, name, report.seed, report.frames) for name in protocols}
    tallies = {name: Tally(name) for name in protocols}
    report.tallies = list(tallies.values())
    stop = asyncio.Event()
    probes = [
        asyncio.create_task(
            _guarded(f"{name} well-behaved client", tallies[name], probe(port, tallies[name], stop))
        )
        for name, (port, _, _, probe) in plans.items()
    ]
    total = report.frames * len(protocols)

    async def watch() -> None:
        shown = 0
        while not stop.is_set():
            done = sum(t.frames for t in report.tallies)
            if not report.rss_early_kib and done >= total / 10:
                report.rss_early_kib = server.rss_kib()
            if progress and done >= shown + total / 10:
                shown = done
                print(f"  {done}/{total} frames, server RSS {server.rss_kib() / 1024:.1f} MiB", flush=True)
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(watch())
    await asyncio.gather(
        *(
            _guarded(f"{name} fuzz clients", tallies[name], run(port, cases, tallies[name], stop))
            for name, (port, cases, run, _) in plans.items()
        )
    )
    report.rss_end_kib = server.rss_kib()
    stop.set()
    for task in [*probes, watcher]:
        try:
            await asyncio.wait_for(task, 30)
        except TimeoutError:
            tallies[protocols[0]].fail("a well-behaved client did not stop within 30 s")


def fuzz(
    seed: int | None = None,
    frames: int = 2_000,
    protocols: Sequence[str] = PROTOCOLS,
    extra_flags: Sequence[str] = (),
    progress: bool = False,
) -> Report:
    """Fuzz a fresh server with ``frames`` cases per protocol; the report holds every finding."""
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    report = Report(seed, frames, [])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parlour-fuzz-") as folder:
        directory = Path(folder)
        with fuzz_server(directory, *extra_flags) as server:
            if progress:
                print(
                    f"fuzz seed {seed}: server on port {server.port} (fish {server.fish_port}, tsuro {server.tsuro_port})",
                    flush=True,
                )
            asyncio.run(_run(server, report, list(protocols), progress))
            server.process.terminate()
            report.exit_code = server.process.wait(30)
        report.seconds = time.perf_counter() - started
        report.log_problems = log_problems(directory / "server.log")
        report.db_status, report.db_output = db_check(directory / "fuzz.db")
    return report
