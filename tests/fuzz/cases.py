"""What a fuzz case is, and the tally of what each protocol answered."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

__all__ = ["Case", "Tally", "percentile", "preview", "weighted_cases"]


@dataclass(frozen=True)
class Case:
    """One hostile input: its class, what goes on the wire, and what the oracle expects.

    ``frames`` are websocket frames (``str`` text, ``bytes`` binary), TCP writes, or one raw
    HTTP request; placeholders such as ``@pid@`` are filled in by the runner, which knows ids the
    generator cannot.
    """

    cls: str
    frames: tuple[str | bytes, ...]
    expect: str
    note: str = ""


def preview(case: Case, limit: int = 160) -> str:
    text = repr(b"".join(f if isinstance(f, bytes) else f.encode() for f in case.frames))
    return f"{case.cls}/{case.note}: {text[:limit]}{'...' if len(text) > limit else ''}"


def percentile(values: Sequence[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass
class Tally:
    """Counts per (class, outcome), the oracle's complaints, the well-behaved client's latencies."""

    protocol: str
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    frames: int = 0
    probe_rounds: int = 0

    def record(self, case: Case, outcome: str, problem: str | None = None) -> None:
        self.frames += 1
        self.counts[case.cls, outcome] += 1
        if problem is not None:
            self.failures.append(f"{self.protocol}: {problem} <- {preview(case)}")

    def fail(self, problem: str) -> None:
        self.failures.append(f"{self.protocol}: {problem}")

    def lines(self) -> list[str]:
        classes = sorted({cls for cls, _ in self.counts})
        out = [f"{self.protocol}: {self.frames} frames, {len(self.failures)} oracle failures"]
        for cls in classes:
            outcomes = ", ".join(
                f"{outcome} {n}" for (c, outcome), n in sorted(self.counts.items()) if c == cls
            )
            out.append(f"  {cls:<14} {outcomes}")
        lat = self.latencies
        out.append(
            f"  well-behaved client: {self.probe_rounds} rounds, latency p50 "
            f"{percentile(lat, 0.5) * 1000:.1f} ms, p99 {percentile(lat, 0.99) * 1000:.1f} ms, "
            f"max {max(lat, default=0) * 1000:.1f} ms"
        )
        return out


Maker = Callable[[random.Random], Case]


def weighted_cases(rng: random.Random, count: int, makers: Sequence[tuple[float, Maker]]) -> Iterator[Case]:
    """``count`` cases from makers picked by weight, all from the one seeded ``rng``."""
    weights = [w for w, _ in makers]
    for _ in range(count):
        (maker,) = rng.choices([m for _, m in makers], weights)
        yield maker(rng)
