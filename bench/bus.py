"""The bus between nodes (parlour.cluster.redisbus.Bus) on its own: CPU per message at each end.

One publishing process and one subscribed process, each a ``Bus`` on uvloop (as a node runs),
over one throwaway Redis on 127.0.0.1: the publisher publishes 1.2 KiB messages on a timer
(``--rate`` a second, one a wake-up, as a node's publications come), counted (with an
``unheard`` callback: Redis answers each) or uncounted (``CLIENT REPLY SKIP``), and the
subscriber counts what it receives. Each process measures its own CPU time
(``time.process_time``) after a second of warm-up to its last message, and Redis's (``INFO
cpu``) over the publisher's window; printed: microseconds of CPU per message, receiving,
publishing and in Redis.

With ``--baseline SRC`` (another checkout's ``src``: ``git worktree add`` of the commit to
compare with), each measure runs on that build just before this one, so that both share each
moment of a busy machine, and the ratios this / baseline are printed. A build
whose ``Bus`` takes a redis-py client first is given one made by its own ``connect``.

    python bench/bus.py [--runs 3] [--seconds 5] [--rate 800] [--baseline OTHER/src]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.redisserver import redis_binary, redis_server

HERE = Path(__file__).resolve()
SOURCE = HERE.parents[1] / "src"
CHANNEL = "bench:bus"
#: About what an effect for a node's connections weighs (a 1 KiB broadcast commit, framed).
PAYLOAD = b"x" * 1200
MODES = ("counted", "uncounted")


def make_bus(url: str, deliver: Callable[[str, bytes], None]) -> Any:
    """A ``Bus`` of the build on ``sys.path``, whichever its constructor takes first: the URL,
    or a redis-py client."""
    from parlour.cluster import redisbus

    first = next(iter(inspect.signature(redisbus.Bus).parameters))
    return redisbus.Bus(redisbus.connect(url) if first == "client" else url, deliver)


def redis_cpu(url: str) -> float:
    import redis

    client = redis.Redis.from_url(url)
    try:
        info = client.info("cpu")
    finally:
        client.close()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


# -- The two processes --------------------------------------------------------------------------


async def subscribe(url: str, count: int, warm: int) -> None:
    """Count ``count`` messages; print the CPU per message after the first ``warm``."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    received = 0
    started = 0.0

    def deliver(channel: str, data: bytes) -> None:
        nonlocal received, started
        received += 1
        if received == warm:
            started = time.process_time()
        elif received == count:
            done.set_result(time.process_time() - started)

    bus = make_bus(url, deliver)
    await bus.start(CHANNEL)
    print("ready", flush=True)
    cpu = await done
    print(json.dumps({"cpu_us": cpu / (count - warm) * 1e6}), flush=True)
    await bus.close()


async def publish(url: str, count: int, warm: int, rate: float, counted: bool) -> None:
    """Publish ``count`` messages, one every 1 / ``rate`` s; print the CPU per message after
    the first ``warm`` (every answer read), this process's and Redis's."""
    loop = asyncio.get_running_loop()
    bus = make_bus(url, lambda channel, data: None)
    await bus.start("bench:publisher")
    unheard: list[int] = []
    interval = 1.0 / rate
    due = loop.time()
    started = redis_started = 0.0
    for index in range(count):
        if index == warm:
            redis_started = redis_cpu(url)
            started = time.process_time()
        if counted:
            bus.publish(CHANNEL, PAYLOAD, lambda index=index: unheard.append(index))
        else:
            bus.publish(CHANNEL, PAYLOAD)
        due += interval
        await asyncio.sleep(max(0.0, due - loop.time()))
    # The answer to a publication nobody hears comes after every earlier one.
    last = loop.create_future()
    bus.publish("bench:nobody", b"", lambda: last.set_result(None))
    await asyncio.wait_for(last, 10)
    cpu = time.process_time() - started
    redis = redis_cpu(url) - redis_started
    measured = count - warm
    print(json.dumps({"cpu_us": cpu / measured * 1e6, "redis_us": redis / measured * 1e6}), flush=True)
    if unheard:
        print(f"{len(unheard)} counted publications went unheard", file=sys.stderr)
    await bus.close()


# -- The measure --------------------------------------------------------------------------------


def child(source: Path, url: str, role: str, args: argparse.Namespace, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    command = [sys.executable, str(HERE), "--role", role, "--url", url, "--count", str(args.count)]
    command += ["--warm", str(args.warm), "--rate", str(args.rate), *extra]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)


def result(process: subprocess.Popen[str], seconds: float) -> dict[str, float]:
    out, _ = process.communicate(timeout=seconds)
    if process.returncode != 0:
        raise SystemExit(f"a bench process failed ({process.returncode}): {out}")
    found: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return found


def measure(source: Path, url: str, mode: str, args: argparse.Namespace) -> dict[str, float]:
    """Receiving, publishing and Redis's CPU per message, µs, for one build and mode."""
    subscriber = child(source, url, "subscribe", args)
    try:
        assert subscriber.stdout is not None
        if subscriber.stdout.readline().strip() != "ready":
            raise SystemExit("the subscriber did not start")
        publisher = child(source, url, "publish", args, f"--{mode}")
        budget = args.count / args.rate + 30
        sent = result(publisher, budget)
        heard = result(subscriber, budget)
    finally:
        subscriber.kill()
        subscriber.wait()
    return {"receive": heard["cpu_us"], "publish": sent["cpu_us"], "redis": sent["redis_us"]}


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.1f} ({min(values):.1f}-{max(values):.1f})"


def report(name: str, runs: list[dict[str, dict[str, float]]]) -> None:
    for mode in MODES:
        figures = {key: [run[mode][key] for run in runs] for key in ("receive", "publish", "redis")}
        print(
            f"{name:9} {mode:9} µs CPU a message, median (range): receiving {spread(figures['receive'])}, "
            f"publishing {spread(figures['publish'])}, Redis {spread(figures['redis'])}"
        )


def compare(this: list[dict[str, dict[str, float]]], base: list[dict[str, dict[str, float]]]) -> None:
    for mode in MODES:
        for key in ("receive", "publish"):
            ratios = [mine[mode][key] / theirs[mode][key] for mine, theirs in zip(this, base, strict=True)]
            shown = ", ".join(f"{ratio:.2f}" for ratio in ratios)
            print(
                f"ratio this / baseline, {mode:9} {key:8}: median {statistics.median(ratios):.2f} "
                f"(runs: {shown})"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="measures of each build and mode (default: 3)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured window (default: 5)")
    parser.add_argument("--rate", type=float, default=800.0, help="messages a second (default: 800)")
    parser.add_argument("--baseline", type=Path, help="another build's src folder, measured in the same runs")
    parser.add_argument("--role", choices=("subscribe", "publish"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--warm", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--counted", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--uncounted", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role is not None:
        import uvloop

        if args.role == "subscribe":
            uvloop.run(subscribe(args.url, args.count, args.warm))
        else:
            uvloop.run(publish(args.url, args.count, args.warm, args.rate, args.counted))
        return 0
    binary = redis_binary()
    if binary is None:
        raise SystemExit("redis-server is not installed (make redis)")
    args.warm = int(args.rate)  # a second
    args.count = args.warm + int(args.rate * args.seconds)
    builds = [("this", SOURCE)]
    if args.baseline is not None:
        builds.insert(0, ("baseline", args.baseline.resolve()))
    print(
        f"{args.count - args.warm} messages of {len(PAYLOAD)} B at {args.rate:.0f}/s measured, "
        f"after {args.warm}; load average {os.getloadavg()[0]:.2f}"
    )
    results: dict[str, list[dict[str, dict[str, float]]]] = {name: [] for name, _ in builds}
    with tempfile.TemporaryDirectory() as tmp, redis_server(Path(tmp) / "redis", binary) as url:
        for run in range(args.runs):
            # Each mode on both builds one after the other: the pairs a ratio compares are
            # measured a few seconds apart.
            figures = {name: {mode: {} for mode in MODES} for name, _ in builds}
            for mode in MODES:
                for name, source in builds:
                    figures[name][mode] = measure(source, url, mode, args)
            for name, _ in builds:
                results[name].append(figures[name])
                shown = "; ".join(
                    f"{mode} receive {figures[name][mode]['receive']:.1f} "
                    f"publish {figures[name][mode]['publish']:.1f} Redis {figures[name][mode]['redis']:.1f}"
                    for mode in MODES
                )
                print(f"run {run + 1} {name:9} µs a message: {shown}", flush=True)
    for name, _ in builds:
        report(name, results[name])
    if args.baseline is not None:
        compare(results["this"], results["baseline"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
