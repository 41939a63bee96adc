"""``python -m tests.chaos.summary FOLDER...``: the figures of several chaos runs together, as
docs/cluster.md gives them: a row per seed (faults, commits acknowledged, games, the checker's
verdict) and a row per kind of fault over every run (how many, the longest, what clients saw).
Each run is checked again from its folder, as ``python -m tests.chaos.checker`` does."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tests.chaos.checker import Stored, Verdict, check
from tests.chaos.history import History

__all__ = ["main", "summarise"]

#: The promises of the chaos run, as the checker names their violations.
PROMISES = (
    "acknowledged commit lost",
    "two moves at a turn",
    "refused yet stored",
    "game stuck after the faults",
    "game not played to its end",
    "traceback in a node's log",
    "subscription left behind",
)


def _verdict(folder: Path) -> tuple[dict[str, Any], Verdict]:
    run = json.loads((folder / "run.json").read_text())
    history = History.read(folder / "history.jsonl")
    stored = Stored.from_json(json.loads((folder / "store.json").read_text()))
    logs = {path.stem: path.read_text(errors="replace") for path in folder.glob("node*.log")}
    return run, check(history, stored, run["lease"], run["healed"], logs, run.get("health", {}))


def summarise(folders: list[Path]) -> str:
    runs = [_verdict(folder) for folder in folders]
    lines = [
        "| seed | minutes | faults | commits acknowledged | games started | verdict |",
        "|---|---|---|---|---|---|",
    ]
    kinds: dict[str, dict[str, Any]] = {}
    broken: Counter[str] = Counter()
    for run, verdict in runs:
        failed = [kind for kind, details in verdict.violations.items() if details]
        broken.update({kind: len(verdict.violations[kind]) for kind in failed})
        lines.append(
            f"| {run['seed']} | {run['seconds'] / 60:g} | {len(run['faults'])} "
            f"| {verdict.counts.get('commits acknowledged', 0)} | {verdict.counts.get('games started', 0)} "
            f"| {'OK' if verdict.ok else 'FAILED: ' + ', '.join(failed)} |"
        )
        for row in verdict.faults:
            total = kinds.setdefault(
                row["kind"],
                {"count": 0, "longest": 0.0, "turn": 0.0, "errors": Counter(), "closes": Counter()},
            )
            total["count"] += row["count"]
            total["longest"] = max(total["longest"], row["longest down"])
            total["turn"] = max(total["turn"], row["longest turn"])
            total["errors"].update(row["errors"])
            total["closes"].update(row["closes"])
    lines += [
        "",
        "| fault | count | longest | errors clients saw (most) | closes | longest wait for a turn |",
        "|---|---|---|---|---|---|",
    ]
    for kind, total in sorted(kinds.items()):
        errors = ", ".join(f"{code} {n}" for code, n in total["errors"].most_common(3)) or "-"
        closes = ", ".join(f"{code} {n}" for code, n in total["closes"].most_common(3)) or "-"
        lines.append(
            f"| {kind} | {total['count']} | {total['longest']:.1f} s | {errors} | {closes} | {total['turn']:.1f} s |"
        )
    lines += ["", "promises broken, over every run:"]
    lines += [f"  {promise}: {broken.get(promise, 0)}" for promise in PROMISES]
    others = sorted(set(broken) - set(PROMISES))
    lines += [f"  {kind}: {broken[kind]}" for kind in others]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    folders = [Path(arg) for arg in argv]
    print(summarise(folders))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
