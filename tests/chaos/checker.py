"""The checker: reads a run's recorded history and what the store holds at its end, and says
whether the cluster kept its promises (docs/cluster.md, "What each fault does"):

- every acknowledged commit is in its game's replay (``async_turns``) at its turn, as sent;
- no turn holds two different moves (two acknowledgements, or an acknowledgement and the store);
- nothing refused with "nothing changed" is stored;
- once the last fault healed, every game answers (not ``TRY_AGAIN``) within two leases and 5 s,
  and every game that started is played to its end;
- every client's last view of its games is what the store holds;
- every chat line acknowledged (echoed to its sender) is in the store's history;
- every request got an answer, an error or a close within the bound (a node that was itself
  paused answers when it wakes, or not at all);
- no node logged a traceback, and every node's /healthz is back to ok.

It also tallies, per kind of fault, what clients saw in its window.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parlour.cluster.notes import AWAIT_LEASES
from parlour.protocols.async_ws.shards.placement import UNKNOWN_OUTCOME
from tests.chaos.history import Event, History
from tests.chaos.workload import GIVE_UP, SIGN_IN

__all__ = ["Stored", "Verdict", "check"]

#: A request is answered, refused or its connection closed within this many leases of its
#: sending (docs/cluster.md, "Every request is answered"), and this many seconds more for the
#: round trips of a loaded machine.
ANSWER_LEASES = 1.5
ANSWER_SLACK = 2.0
#: Faults during which an answer may take longer: the store away or slow (commits pause until
#: it answers), a link slowed or held, the client's node itself paused.
DELAYING = ("pg-stop", "pg-pause", "link-delay", "link-loss", "link-hold", "node-pause")

#: Longer than any fault of a run keeps a node subscribed to a service it no longer owns (the
#: longest pause, 3 leases, and the takeover after it).
CROWDED_SECONDS = 30.0
#: The messages a refused commit is told: only the first says for certain nothing changed.
NOTHING_CHANGED = "nothing changed"


@dataclass
class Stored:
    """What the store holds at the end of a run."""

    #: game id -> (status, turn index)
    games: dict[int, tuple[str, int]] = field(default_factory=dict)
    #: (game id, turn index) -> the action committed (None where the turn has no action)
    turns: dict[tuple[int, int], str | None] = field(default_factory=dict)
    #: (scope, sender, text) of every chat line
    chat: set[tuple[int, int, str]] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {
            "games": {str(k): list(v) for k, v in self.games.items()},
            "turns": [[g, t, a] for (g, t), a in self.turns.items()],
            "chat": [list(line) for line in sorted(self.chat)],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Stored:
        return cls(
            {int(k): (v[0], v[1]) for k, v in data["games"].items()},
            {(g, t): a for g, t, a in data["turns"]},
            {(s, p, x) for s, p, x in data["chat"]},
        )


@dataclass
class Verdict:
    violations: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    counts: Counter[str] = field(default_factory=Counter)
    faults: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(self.violations.values())

    def fail(self, kind: str, detail: str) -> None:
        self.violations[kind].append(detail)


@dataclass
class Request:
    event: Event
    message: dict[str, Any]
    answer: Event | None = None
    #: closed: the connection ended before an answer.
    closed: bool = False
    #: An acknowledgement came, first or after another answer (an owner that answered after
    #: its tenure was taken for over, its router having said the outcome was unknown).
    acknowledged: bool = False

    @property
    def answer_type(self) -> str | None:
        return None if self.answer is None else self.answer.data["m"].get("type")


def _requests(history: History) -> list[Request]:
    """Every request with a request id, with its answer on the same connection (if any)."""
    requests: dict[str, Request] = {}
    by_conn: dict[tuple[str, int], list[Request]] = defaultdict(list)
    for event in history.events:
        if event.kind == "send":
            message = event.data["m"]
            request_id = message.get("request_id")
            if request_id:
                request = Request(event, message)
                requests[request_id] = request
                by_conn[event.who, event.conn].append(request)
        elif event.kind == "recv":
            answered = event.data.get("m", {}).get("request_id")
            found = requests.get(answered) if answered else None
            if found is not None and found.event.conn == event.conn:
                if found.answer is None:
                    found.answer = event
                if event.data["m"].get("type") == "ActionCommitedRequest":
                    found.acknowledged = True
        elif event.kind == "close":
            for request in by_conn.pop((event.who, event.conn), []):
                if request.answer is None:
                    request.closed = True
    return list(requests.values())


def _windows(history: History, kind: str) -> dict[str, list[tuple[float, float]]]:
    """The time windows of each target's faults of ``kind``."""
    opened: dict[tuple[str, float], float] = {}
    windows: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for event in history.events:
        if event.kind == "fault" and event.data["kind"] == kind:
            opened[event.data["target"], event.data["at"]] = event.t
        elif event.kind == "heal" and event.data["kind"] == kind:
            start = opened.pop((event.data["target"], event.data["at"]), None)
            if start is not None:
                windows[event.data["target"]].append((start, event.t))
    for (target, _), start in opened.items():
        windows[target].append((start, float("inf")))
    return windows


def _store_away(history: History) -> list[tuple[float, float]]:
    """The windows in which the store was away for some node: PostgreSQL stopped or paused, or
    a node's link to it held, cut or lossy."""
    windows = [window for kind in ("pg-stop", "pg-pause") for window in _windows(history, kind).get("pg", [])]
    for kind in ("link-loss", "link-hold", "link-cut"):
        for target, found in _windows(history, kind).items():
            if target.endswith("-pg"):
                windows += found
    return windows


def _answered_by_its_node(answer: dict[str, Any]) -> bool:
    """Whether ``answer`` is the one a connection's node gives a routed request whose owner's
    answer never came (placement.unanswered): its outcome unknown."""
    return answer.get("type") == "ErrorRequest" and answer.get("message") == UNKNOWN_OUTCOME


def _nothing_changed(answer: dict[str, Any]) -> bool:
    """Whether an answer says the request changed nothing: TRY_AGAIN (send it again), or a
    refusal the store confirmed."""
    code = answer.get("code")
    return code == "TRY_AGAIN" or (code == "INTERNAL_ERROR" and NOTHING_CHANGED in answer.get("message", ""))


def _delaying(history: History) -> dict[str, list[tuple[float, float]]]:
    """The windows of the faults that may delay answers: by node ("n2": its pause, its links)
    and "*" for those of every node (the store itself)."""
    found: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for kind in DELAYING:
        for target, windows in _windows(history, kind).items():
            key = "*" if target == "pg" else target.split("-")[0]
            # A link's fault delays every node's requests whose owner is behind that link.
            if kind.startswith("link-"):
                key = "*"
            found[key] += windows
    return found


def check(
    history: History,
    stored: Stored,
    lease: float,
    healed: float,
    logs: dict[str, str],
    health: dict[str, dict[str, Any]],
) -> Verdict:
    """``healed``: when the last fault ended (history time)."""
    verdict = Verdict()
    requests = _requests(history)
    commits = [r for r in requests if r.message.get("type") == "CommitActionRequest"]
    verdict.counts["commits sent"] = len(commits)

    # -- Acknowledged commits, two moves at a turn, refused yet stored ------------------------
    acked: dict[tuple[int, int], set[str]] = defaultdict(set)
    for request in commits:
        key = (request.message["game_id"], request.message["turn_index"])
        action: str = request.message.get("action") or ""
        kind = "ActionCommitedRequest" if request.acknowledged else request.answer_type
        if kind == "ActionCommitedRequest":
            acked[key].add(action)
            verdict.counts["commits acknowledged"] += 1
            stored_action = stored.turns.get(key, "<missing>")
            if key not in stored.turns:
                verdict.fail(
                    "acknowledged commit lost",
                    f"game {key[0]} turn {key[1]} ({request.event.who}, {request.event.t:.1f}s)",
                )
            elif stored_action != action:
                verdict.fail(
                    "two moves at a turn",
                    f"game {key[0]} turn {key[1]}: acknowledged {action!r}, stored {stored_action!r}",
                )
        elif kind == "ErrorRequest":
            assert request.answer is not None
            code = request.answer.data["m"].get("code")
            unsure = "" if _nothing_changed(request.answer.data["m"]) else ", outcome unknown"
            verdict.counts[f"commits refused {code}{unsure}"] += 1
        else:
            verdict.counts[
                "commits without answer (connection closed)" if request.closed else "commits without answer"
            ] += 1
    for key, actions in acked.items():
        if len(actions) > 1:
            verdict.fail(
                "two moves at a turn", f"game {key[0]} turn {key[1]}: acknowledged {sorted(actions)}"
            )
    for request in commits:
        if request.answer is None or not _nothing_changed(request.answer.data["m"]):
            continue
        key = (request.message["game_id"], request.message["turn_index"])
        action = request.message.get("action") or ""
        # Stored by another request of the same move (sent again, acknowledged or unknown), the
        # refusal was true; stored by this one (acknowledged after it was refused), it was not.
        others = [
            other
            for other in commits
            if other is not request
            and (other.message["game_id"], other.message["turn_index"], other.message.get("action") or "")
            == (*key, action)
            and (other.acknowledged or other.answer is None or not _nothing_changed(other.answer.data["m"]))
        ]
        if stored.turns.get(key) == action and (request.acknowledged or not others):
            verdict.fail(
                "refused yet stored", f"game {key[0]} turn {key[1]} {action!r} ({request.event.t:.1f}s)"
            )

    # -- Every request answered within the bound ------------------------------------------------
    bound = 2 * lease + 5.0
    answer_bound = ANSWER_LEASES * lease + ANSWER_SLACK
    last_resort = (AWAIT_LEASES + 1 / 3) * lease + ANSWER_SLACK
    paused = _windows(history, "node-pause")
    delaying = _delaying(history)
    store_away = _store_away(history)
    for event in history.events:
        if event.kind != "note" or event.data.get("what") not in ("unanswered", "sign-in unanswered"):
            continue
        verdict.counts[str(event.data["what"])] += 1
        node_windows = paused.get(f"n{event.node}", [])
        # A paused node answers nothing until it wakes; the client gave up on it meanwhile.
        explained = any(start - bound <= event.t <= end + bound for start, end in node_windows)
        if not explained and event.data["what"] == "unanswered":
            # Sent while the store was away for some node (stopped, paused, or its link held,
            # cut or lossy): a request that stores something waits for it (commits pause until
            # it answers, and a node that stops waits for it before it hands its services
            # over), and the client's patience may end first. Only slowed is no excuse.
            sent = event.t - GIVE_UP
            explained = any(start <= sent <= stop for start, stop in store_away)
            if explained:
                verdict.counts["unanswered, sent while the store was away"] += 1
        if event.data["what"] == "sign-in unanswered":
            # A sign-in waits for the store (it records the session): the client's patience
            # is shorter than a store fault may last.
            mine = [*delaying.get("*", []), *delaying.get(f"n{event.node}", [])]
            sent = event.t - SIGN_IN
            explained = explained or any(start <= event.t and sent <= stop for start, stop in mine)
        if not explained:
            verdict.fail(
                str(event.data["what"]),
                f"{event.who} on n{event.node} at {event.t:.1f}s {event.data.get('request_id', '')}",
            )
    # Answered, but later than docs/cluster.md says ("Every request is answered"), where no
    # fault that is allowed to delay answers (the store away or slow, a link slowed, the node
    # itself paused) was in force.
    for request in requests:
        end = request.answer.t if request.answer is not None else None
        if end is None or end - request.event.t <= answer_bound:
            continue
        sent = request.event.t
        mine = [*delaying.get("*", []), *delaying.get(f"n{request.event.node}", [])]
        if any(start <= end and sent <= stop for start, stop in mine):
            verdict.counts["answers later than the bound, with a store or link fault in force"] += 1
            continue
        if end - sent <= last_resort and _answered_by_its_node(request.answer.data["m"]):
            # The owner's answer was lost on its way (its node's link to Redis reset as it
            # published): the connection's node answered, within the last resort's bound
            # (docs/cluster.md, "Every request is answered").
            verdict.counts["answered by the connection's node, the owner's answer lost"] += 1
            continue
        verdict.fail(
            "answered later than the bound",
            f"{request.event.who} on n{request.event.node}: {request.message.get('type')} "
            f"{request.message.get('request_id')} sent at {sent:.1f}s, answered after {end - sent:.1f}s",
        )
    for event in history.events:
        if event.kind == "note" and event.data.get("what") == "no prompt":
            verdict.counts["turns waited for without a prompt (signed in again)"] += 1
        if event.kind == "note" and event.data.get("what") == "client error":
            verdict.fail("client error", f"{event.who}: {event.data.get('error')}")

    # -- After the faults: every game answers, and ends -----------------------------------------
    answered: dict[int, float] = {}
    probed: set[int] = set()
    for event in history.events:
        if event.kind == "note" and event.data.get("what") == "probe":
            probed.add(event.data["game_id"])
        if event.kind == "note" and event.data.get("what") == "probe answered":
            answered.setdefault(event.data["game_id"], event.t)
    verdict.counts["games probed after the faults"] = len(probed)
    for game_id in sorted(probed):
        at = answered.get(game_id)
        if at is None or at - healed > bound:
            late = "never" if at is None else f"after {at - healed:.1f}s"
            verdict.fail(
                "game stuck after the faults", f"game {game_id}: answered {late} (bound {bound:.0f}s)"
            )
    started = {game_id for game_id, (status, _) in stored.games.items() if status != "NOT_STARTED"}
    verdict.counts["games started"] = len(started)
    verdict.counts["games not started (invitations open)"] = len(stored.games) - len(started)
    for game_id in sorted(started):
        status, turn_index = stored.games[game_id]
        if status in ("RUNNING", "ABORTING"):
            verdict.fail("game not played to its end", f"game {game_id}: {status} at turn {turn_index}")
    # A game seen running never goes back to NOT_STARTED. A read is linearizable anywhere
    # between its sending and its answer: a report answering a request sent before the client
    # saw the game running may say NOT_STARTED (the game started meanwhile).
    sent_at = {r.message.get("request_id"): r.event.t for r in requests}
    running_since: dict[tuple[str, int], float] = {}
    regressed: set[int] = set()
    for event in history.events:
        if event.kind != "recv":
            continue
        message = event.data.get("m", {})
        asked = sent_at.get(message.get("request_id"), event.t)
        reports = message.get("status_reports", [])
        if "status_report" in message:
            reports = [*reports, message["status_report"]]
        for report in reports:
            key = (event.who, report["game_id"])
            if report.get("status") == "RUNNING":
                running_since.setdefault(key, event.t)
            elif (
                report.get("status") == "NOT_STARTED"
                and asked > running_since.get(key, float("inf"))
                and report["game_id"] not in regressed
            ):
                regressed.add(report["game_id"])
                verdict.fail(
                    "started game back to NOT_STARTED",
                    f"game {report['game_id']} at {event.t:.1f}s ({event.who})",
                )
    for game_id in sorted({game for _, game in running_since}):
        if stored.games.get(game_id, ("", 0))[0] == "NOT_STARTED":
            verdict.fail("started game back to NOT_STARTED", f"game {game_id} in the store")

    # -- Every client's last view is the store's -------------------------------------------------
    last: dict[tuple[str, int], dict[str, Any]] = {}
    for event in history.events:
        if event.kind == "recv" and event.data.get("m", {}).get("type") == "GameStatusReportRequest":
            for report in event.data["m"].get("status_reports", []):
                last[event.who, report["game_id"]] = report
    for (who, game_id), report in sorted(last.items()):
        if game_id not in stored.games:
            verdict.fail("client sees a game the store lacks", f"{who}: game {game_id}")
            continue
        status, turn_index = stored.games[game_id]
        if status in ("RUNNING",) and (report.get("status"), report.get("turn_index")) != (
            status,
            turn_index,
        ):
            verdict.fail(
                "client's last view differs from the store",
                f"{who}: game {game_id} {report.get('status')} at {report.get('turn_index')}, stored {status} at {turn_index}",
            )

    # -- Chat ------------------------------------------------------------------------------------
    lines = {(scope, text) for scope, _, text in stored.chat}
    for request in requests:
        if request.message.get("type") != "MulticastChatRequest":
            continue
        verdict.counts["chat lines sent"] += 1
        if request.answer_type != "ClientChatRequest":
            continue
        assert request.answer is not None
        verdict.counts["chat lines acknowledged"] += 1
        # Every line's text is unique in a run: its scope and text find it (the echo names a
        # game chat's sender by seat, the store by account).
        line = (request.message.get("game_id", 0), request.message["text"])
        if line not in lines:
            verdict.fail("acknowledged chat line lost", f"{request.event.who}: {line}")

    # -- Subscriptions -----------------------------------------------------------------------
    # A service's channel heard by more than its owner: a node frozen or cut off while another
    # took the service over keeps its subscription until it wakes (or Redis drops it); one that
    # lasts longer than any fault a run makes is a subscription a node forgot.
    for channel, (first, last) in _crowded(history):
        if last - first > CROWDED_SECONDS:
            verdict.fail(
                "subscription left behind",
                f"{channel}: more than one subscriber from {first:.1f}s to {last:.1f}s",
            )

    # -- Logs and health -------------------------------------------------------------------------
    for name, text in sorted(logs.items()):
        tracebacks = text.count("Traceback")
        if tracebacks:
            verdict.fail("traceback in a node's log", f"{name}: {tracebacks}")
    for name, state in sorted(health.items()):
        if state.get("status") != "ok" or state.get("store") not in ("ok", None):
            verdict.fail("/healthz not ok after the faults", f"{name}: {state}")

    verdict.faults = _per_fault(history, requests, bound)
    return verdict


def _crowded(history: History) -> list[tuple[str, tuple[float, float]]]:
    """Each spell of a channel sampled with more than one subscriber (the run's census, twice a
    second): its first and last sample."""
    spells: list[tuple[str, tuple[float, float]]] = []
    open_: dict[str, tuple[float, float]] = {}
    previous = None
    for event in history.events:
        if event.who != "census" or event.data.get("what") != "crowded channels":
            continue
        channels = event.data["channels"]
        for channel, (first, last) in list(open_.items()):
            # Missing from this sample, or not sampled for a while (none was crowded meanwhile).
            if channel not in channels or (previous is not None and event.t - previous > 1.0):
                spells.append((channel, (first, last)))
                del open_[channel]
        for channel in channels:
            first, _ = open_.get(channel, (event.t, event.t))
            open_[channel] = (first, event.t)
        previous = event.t
    return spells + list(open_.items())


def _per_fault(history: History, requests: list[Request], bound: float) -> list[dict[str, Any]]:
    """Per kind of fault: how many, what clients saw in their windows (until ``bound`` after
    each ended), and the longest a turn waited for its acknowledgement."""
    windows: list[tuple[str, float, float]] = []
    opened: dict[tuple[str, str, float], float] = {}
    for event in history.events:
        key = (event.data.get("kind", ""), event.data.get("target", ""), event.data.get("at", 0.0))
        if event.kind == "fault":
            opened[key] = event.t
        elif event.kind == "heal" and key in opened:
            windows.append((key[0], opened.pop(key), event.t))
    # A turn's wait: from its prompt to its acknowledgement, retries and sign-ins included.
    prompted: dict[tuple[str, int, int], float] = {}
    waits: list[tuple[float, float]] = []
    acked_turns = {
        (r.event.who, r.message["game_id"], r.message["turn_index"]): r.answer.t
        for r in requests
        if r.message.get("type") == "CommitActionRequest"
        and r.answer is not None
        and r.answer_type == "ActionCommitedRequest"
    }
    for event in history.events:
        message = event.data.get("m", {}) if event.kind == "recv" else {}
        if message.get("type") == "ActionRequiredRequest" and message.get("legal"):
            prompted.setdefault((event.who, message["game_id"], message["turn_index"]), event.t)
    for key, at in prompted.items():
        done = acked_turns.get(key)
        if done is not None:
            waits.append((at, done))
    table: dict[str, dict[str, Any]] = {}
    for kind, start, end in windows:
        row = table.setdefault(
            kind,
            {
                "kind": kind,
                "count": 0,
                "errors": Counter(),
                "closes": Counter(),
                "longest turn": 0.0,
                "longest down": 0.0,
            },
        )
        row["count"] += 1
        row["longest down"] = max(row["longest down"], end - start)
        for event in history.events:
            if not start <= event.t <= end + bound:
                continue
            if event.kind == "recv" and event.data.get("m", {}).get("type") == "ErrorRequest":
                row["errors"][event.data["m"].get("code")] += 1
            elif event.kind == "close":
                row["closes"][event.data.get("code")] += 1
        for prompt_at, ack_at in waits:
            if start <= ack_at and prompt_at <= end + bound:
                row["longest turn"] = max(row["longest turn"], ack_at - prompt_at)
    return sorted(table.values(), key=lambda row: row["kind"])


def main(folder: Path) -> int:
    """Check a run's folder again (history.jsonl, store.json, run.json, the node logs)."""
    from tests.chaos.report import render

    run = json.loads((folder / "run.json").read_text())
    history = History.read(folder / "history.jsonl")
    stored = Stored.from_json(json.loads((folder / "store.json").read_text()))
    logs = {path.stem: path.read_text(errors="replace") for path in folder.glob("node*.log")}
    verdict = check(history, stored, run["lease"], run["healed"], logs, run.get("health", {}))
    print(render(run, verdict))
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
