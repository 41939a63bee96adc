"""What a chaos run prints: the seed and how to run it again, the schedule of faults, a table
per kind of fault, the counts, and the checker's verdict."""

from __future__ import annotations

from typing import Any

from tests.chaos.checker import Verdict
from tests.chaos.nemesis import Fault

__all__ = ["render"]


def render(run: dict[str, Any], verdict: Verdict) -> str:
    lines = [
        f"chaos run: seed {run['seed']}, {run['seconds'] / 60:.1f} minutes of faults, lease {run['lease']} s, "
        f"{run.get('wall seconds', '?')} s in all",
        f"again: make chaos SEED={run['seed']} MINUTES={run['seconds'] / 60:g}",
        f"network: {run.get('namespace') or 'the machine loopback (not root: no namespace of its own)'}; "
        "link faults through the run's own proxy",
        "",
        f"faults ({len(run['faults'])}):",
    ]
    lines += ["  " + Fault(**fault).describe() for fault in run["faults"]]
    lines += [
        "",
        "| fault | count | longest | errors seen | closes seen | longest turn wait |",
        "|---|---|---|---|---|---|",
    ]
    for row in verdict.faults:
        errors = ", ".join(f"{code} {n}" for code, n in row["errors"].most_common()) or "-"
        closes = ", ".join(f"{code} {n}" for code, n in row["closes"].most_common()) or "-"
        lines.append(
            f"| {row['kind']} | {row['count']} | {row['longest down']:.1f} s | {errors} | {closes} | {row['longest turn']:.1f} s |"
        )
    lines += ["", "counts:"]
    lines += [f"  {name}: {count}" for name, count in sorted(verdict.counts.items())]
    lines += [""]
    if verdict.ok:
        lines.append("verdict: OK (every promise kept)")
    else:
        lines.append("verdict: FAILED")
        for kind, details in verdict.violations.items():
            if details:
                lines.append(f"  {kind}: {len(details)}")
                lines += [f"    {detail}" for detail in details[:10]]
    return "\n".join(lines) + "\n"
