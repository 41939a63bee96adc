// Past games and their replays: the lobby's "Past games" list (GET /api/games, newest first, a
// page at a time) and the replay view of one game (GET /api/games/{id}) on its own board, with
// step, play and jump controls. Talks to the API through records.js; knows the game page only
// through the hooks given to setupReplays.

import { createBoard } from "./boards/index.js";
import { node } from "./dom.js";
import { titleCase } from "./apologies-moves.js";
import { listGames, loadGame } from "./records.js";
import { movedPawns, pawnChanges, replaySteps, resultText, seatColors, stepInfo, viewPawns, winnerHandles } from "./apologies-replay.js";

const $ = (id) => document.getElementById(id);

const PAGE_SIZE = 10;
const SPEEDS = [["Slow", 1500], ["Normal", 700], ["Fast", 250], ["Very fast", 80]];
const STATES = { CANCELLED: "cancelled", ABORTED: "aborted" };

function when(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** hooks: handle() -> the registered handle or null; busy() -> true while a live game needs the
 * page (replays cannot be opened then); onOpen() before a replay is shown; onChange() after the
 * replay view opened or closed (the page lays itself out again); showError(title, comment). */
export function setupReplays({ handle, busy, onOpen = () => {}, onChange = () => {}, showError }) {
  const past = { games: [], next: null, loading: false, error: "", loaded: false, token: 0, mine: false };
  const replay = { record: null, steps: [], k: 0, timer: null, speed: 700, board: null, opening: null };

  // ------------------------------------------------------------ the list of past games

  async function load(reset) {
    const token = ++past.token;
    const player = past.mine ? handle() : null;
    past.loading = true;
    past.error = "";
    if (reset) {
      past.games = [];
      past.next = null;
    }
    renderList();
    try {
      const page = await listGames({ player, limit: PAGE_SIZE, before: reset ? null : past.next });
      if (token !== past.token) return; // a newer request (refresh, filter) took over
      const known = new Set(past.games.map((g) => g.id));
      past.games.push(...page.games.filter((g) => !known.has(g.id)));
      past.next = page.next ?? null;
      past.loaded = true;
    } catch (error) {
      if (token !== past.token) return;
      past.error = error.message;
    }
    past.loading = false;
    renderList();
  }

  function refresh() {
    if ($("past-box").open) load(true);
  }

  function pastItem(game) {
    const colors = seatColors(game);
    const winners = new Set(winnerHandles(game));
    const ended = STATES[game.state];
    const players = game.seats.map((seat, index) =>
      node("span", { class: `past-seat${winners.has(seat.handle) ? " winner" : ""}` },
        node("span", { class: `swatch ${(colors[index] ?? "none").toLowerCase()}` }),
        seat.handle, seat.robot ? node("span", { class: "robot" }, " (robot)") : null));
    const outcome = winners.size ? `${[...winners].join(" and ")} won` : ended ? titleCase(game.state) : "";
    const blocked = busy();
    return node("li", { class: "game-item past-item", "data-testid": "past-game", "data-game-id": game.id },
      node("div", { class: "game-name" }, game.name, ended ? node("span", { class: "badge" }, ended) : null),
      node("div", { class: "game-meta past-players" }, ...players.flatMap((p, i) => (i ? [", ", p] : [p]))),
      node("div", { class: "game-meta" },
        outcome ? node("strong", { class: "past-outcome", "data-testid": "past-outcome" }, outcome) : null,
        outcome ? " · " : null,
        `${titleCase(game.options?.mode ?? "")} · ${plural(game.moves, "move")} · `,
        node("time", { dateTime: new Date((game.finished ?? game.created) * 1000).toISOString() }, when(game.finished ?? game.created))),
      node("button", {
        type: "button", "data-testid": "past-replay", disabled: blocked || !game.moves,
        title: !game.moves ? "This game ended before its first move" : blocked ? "Leave your game to watch a replay" : "Watch this game again",
        onclick: () => open(game.id),
      }, replay.opening === game.id ? "Loading…" : "Replay"));
  }

  function renderList() {
    const list = $("past-games");
    const items = past.games.map(pastItem);
    if (!items.length && past.loaded && !past.loading && !past.error) {
      items.push(node("li", { class: "empty" }, past.mine ? "You have no finished games yet." : "No finished games yet."));
    }
    if (past.loading) items.push(node("li", { class: "empty", "data-testid": "past-loading" }, "Loading…"));
    list.replaceChildren(...items);
    $("past-error").hidden = !past.error;
    $("past-error").textContent = past.error ? `Past games are not available: ${past.error}.` : "";
    $("past-more").hidden = !past.next || past.loading || Boolean(past.error);
    $("past-mine").disabled = !handle();
  }

  $("past-box").addEventListener("toggle", () => {
    if ($("past-box").open) load(true);
  });
  $("past-refresh").addEventListener("click", () => load(true));
  $("past-more").addEventListener("click", () => load(false));
  $("past-mine").addEventListener("change", () => {
    past.mine = $("past-mine").checked;
    load(true);
  });

  // ------------------------------------------------------------ the replay view

  async function open(id) {
    if (busy() || replay.opening) return;
    replay.opening = id;
    renderList();
    let record;
    try {
      record = await loadGame(id);
    } catch (error) {
      showError("Replay not available", `${error.message}.`);
      return;
    } finally {
      replay.opening = null;
      renderList();
    }
    const steps = replaySteps(record);
    if (!steps.length) {
      showError("Nothing to replay", "this game ended before its first move.");
      return;
    }
    pause();
    onOpen();
    replay.record = record;
    replay.steps = steps;
    if (!replay.board) replay.board = createBoard("apologies", $("replay-board"), {});
    $("replay").hidden = false;
    buildStatic();
    go(0);
    onChange();
    $("replay").scrollIntoView({ block: "start" });
  }

  function close(notify = true) {
    pause();
    replay.record = null;
    replay.steps = [];
    $("replay").hidden = true;
    if (notify) onChange();
  }

  /** What does not change from step to step: title, facts, slider range and the move list. */
  function buildStatic() {
    const { record, steps } = replay;
    const total = steps.length - 1;
    const mode = titleCase(record.options?.mode ?? "");
    $("replay-title").textContent = `Replay · ${record.name}${mode ? ` · ${mode}` : ""}`;
    const finished = record.finished ?? record.created;
    $("replay-meta").replaceChildren(
      `${plural(record.seats.length, "seat")} · ${plural(total, "move")}`,
      finished ? " · finished " : "",
      finished ? node("time", { dateTime: new Date(finished * 1000).toISOString() }, when(finished)) : "");
    const slider = $("replay-slider");
    slider.max = String(total);
    slider.setAttribute("aria-valuemax", String(total));
    const entries = [];
    for (let k = 0; k <= total; k++) {
      const info = stepInfo(record, steps, k);
      const color = info.color ? info.color.toLowerCase() : "none";
      const label = k === 0 ? `Start: ${info.text}` : `${info.handle} ${info.text}`;
      entries.push(node("li", { "data-step": String(k) },
        node("button", { type: "button", class: "replay-move", "data-testid": "replay-move", "data-step": String(k), title: label, onclick: () => { pause(); go(k); } },
          node("span", { class: "move-number" }, k === 0 ? "0." : `${k}.`),
          k ? node("span", { class: `swatch ${color}` }) : null,
          node("span", { class: "move-text" }, label))));
    }
    $("replay-moves").replaceChildren(...entries);
  }

  function go(k) {
    const { record, steps } = replay;
    if (!record) return;
    const total = steps.length - 1;
    replay.k = Math.max(0, Math.min(total, k));
    const at = replay.k;
    const step = steps[at];
    const info = stepInfo(record, steps, at);

    // The board: the pawns of this step's view, the ones that moved marked, where they came from hollow.
    const changes = at ? pawnChanges(steps[at - 1].view, step.view) : [];
    const action = step.view.action;
    const card = action?.card ?? null;
    const caption = card && info.handle ? `${info.handle} ${action.action.startsWith("Turn is forfeit") ? "discarded" : "played"}` : "";
    replay.board.render({ pawns: viewPawns(step.view), card, caption, marked: movedPawns(steps, at), ghosts: changes.map((c) => c.old) });

    // Where we are, who moved and what they did.
    const stepBox = $("replay-step");
    stepBox.dataset.step = String(at);
    stepBox.dataset.total = String(total);
    stepBox.textContent = at === 0 ? `Start · ${plural(total, "move")}` : `Move ${at} of ${total}`;
    const mover = $("replay-mover");
    if (info.handle) {
      mover.replaceChildren(node("span", { class: `swatch ${(info.color ?? "none").toLowerCase()}` }),
        `${info.handle}${info.robot ? " (robot)" : ""}${info.color ? ` · ${titleCase(info.color)}` : ""}`);
    } else {
      const first = at === 0 ? step.view.to_move : null;
      const seat = first ? seatColors(record).indexOf(first) : -1;
      mover.replaceChildren(first ? `${seat >= 0 ? `${record.seats[seat].handle} (${titleCase(first)})` : titleCase(first)} moves first` : "");
    }
    mover.dataset.color = info.color ?? "";
    $("replay-action").textContent = info.text;
    $("replay-ending").textContent = info.ending;
    $("replay-ending").hidden = !info.ending;
    const end = at === total;
    $("replay-result").hidden = !end;
    $("replay-result").textContent = end ? resultText(record) : "";
    $("replay-result").className = `banner ${record.state === "COMPLETED" ? "done" : "cancelled"}`;

    renderSeats(step.view, info, end);

    // Controls.
    const slider = $("replay-slider");
    slider.value = String(at);
    slider.setAttribute("aria-valuenow", String(at));
    slider.setAttribute("aria-valuetext", stepBox.textContent);
    $("replay-first").disabled = at === 0;
    $("replay-back").disabled = at === 0;
    $("replay-forward").disabled = end;
    $("replay-last").disabled = end;
    renderPlayButton();

    // The move list: the current move marked and kept in view (scrolling the list only, not the page).
    const list = $("replay-moves");
    for (const item of list.querySelectorAll("li.current")) {
      item.classList.remove("current");
      item.firstChild.removeAttribute("aria-current");
    }
    const current = list.children[at];
    if (current) {
      current.classList.add("current");
      current.firstChild.setAttribute("aria-current", "step");
      const top = current.offsetTop;
      const bottom = top + current.offsetHeight;
      if (top < list.scrollTop) list.scrollTop = top;
      else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight;
    }
  }

  function renderSeats(view, info, end) {
    const { record } = replay;
    const colors = seatColors(record);
    const winners = new Set(end ? winnerHandles(record) : []);
    $("replay-seats").replaceChildren(...record.seats.map((seat, index) => {
      const color = colors[index];
      const part = view.players.find((p) => p.color === color);
      const home = part ? part.pawns.filter((p) => p.home).length : 0;
      const tags = [];
      if (seat.robot) tags.push("robot");
      if (winners.has(seat.handle)) tags.push("winner");
      const moving = info.handle !== null && info.color === color;
      return node("li", { class: `seat${moving ? " to-move" : ""}${winners.has(seat.handle) ? " won" : ""}`, "data-testid": `replay-seat-${color ?? index}` },
        node("span", { class: `swatch ${(color ?? "none").toLowerCase()}` }),
        node("span", { class: "seat-name" }, seat.handle),
        tags.length ? node("span", { class: "tags" }, tags.join(", ")) : null,
        part ? node("span", { class: "home-count", title: "pawns home" }, `${home}/4 home`) : null);
    }));
  }

  function renderPlayButton() {
    const button = $("replay-play");
    const playing = replay.timer !== null;
    button.textContent = playing ? "Pause" : "Play";
    button.setAttribute("aria-pressed", String(playing));
    button.dataset.playing = String(playing);
  }

  function play() {
    if (!replay.record || replay.timer !== null) return;
    // At the end, play starts again from the beginning.
    if (replay.k >= replay.steps.length - 1) go(0);
    replay.timer = setInterval(() => {
      go(replay.k + 1);
      if (replay.k >= replay.steps.length - 1) pause();
    }, replay.speed);
    $("replay-now").setAttribute("aria-live", "off"); // no announcement of every step while playing
    renderPlayButton();
  }

  function pause() {
    if (replay.timer !== null) clearInterval(replay.timer);
    replay.timer = null;
    $("replay-now").setAttribute("aria-live", "polite");
    if (replay.record) renderPlayButton();
  }

  function step(delta) {
    pause();
    go(replay.k + delta);
  }

  $("replay-close").addEventListener("click", () => close());
  $("replay-first").addEventListener("click", () => { pause(); go(0); });
  $("replay-back").addEventListener("click", () => step(-1));
  $("replay-forward").addEventListener("click", () => step(1));
  $("replay-last").addEventListener("click", () => { pause(); go(replay.steps.length - 1); });
  $("replay-play").addEventListener("click", () => (replay.timer === null ? play() : pause()));
  $("replay-slider").addEventListener("input", () => { pause(); go(Number($("replay-slider").value)); });
  const speed = $("replay-speed");
  speed.replaceChildren(...SPEEDS.map(([label, ms]) => node("option", { value: String(ms), selected: ms === replay.speed }, label)));
  speed.addEventListener("change", () => {
    replay.speed = Number(speed.value);
    if (replay.timer !== null) {
      pause();
      play();
    }
  });
  // Arrow keys step, Home and End jump, while the replay is shown and has the keyboard (or nothing
  // else has: the page itself), except in its slider and speed list, which use the keys themselves.
  document.addEventListener("keydown", (event) => {
    if (!replay.record || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target !== document.body && !$("replay").contains(target)) return;
    if (target.closest?.("input, select, textarea")) return;
    const moves = { ArrowLeft: () => step(-1), ArrowRight: () => step(1), Home: () => { pause(); go(0); }, End: () => { pause(); go(replay.steps.length - 1); } };
    if (moves[event.key]) {
      event.preventDefault();
      moves[event.key]();
    }
  });

  renderList();

  return {
    isOpen: () => replay.record !== null,
    open,
    close,
    refresh,
    renderList,
  };
}
