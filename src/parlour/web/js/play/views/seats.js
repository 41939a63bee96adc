// The open game's seats (who, robot or away, the board's detail, the colour) and their clocks.

import { node } from "../../dom.js";
import { currentGame, remaining } from "../model.js";
import { formatClock } from "../words.js";

const SEAT_STATES = { FORFEITED: "forfeited: a robot plays", TIMED_OUT: "out of time: a robot plays", LEFT: "left" };

/** The seats of `g` as the player `me` (a local id) sees them; `Board` gives colours and details. */
export function renderSeats(g, me, Board) {
  document.getElementById("seats").replaceChildren(...g.players.map((p) => {
    const tags = [];
    if (p.local_id === me) tags.push("you");
    if (p.kind === "ROBOT") tags.push("robot");
    if (SEAT_STATES[p.state]) tags.push(SEAT_STATES[p.state]);
    if (p.kind === "HUMAN" && (p.presence ?? "OFFLINE") === "OFFLINE" && p.local_id !== me) tags.push("away");
    const detail = Board && g.view ? Board.seatDetail(g.view, p.local_id) : "";
    const color = Board ? Board.seatColor(p.local_id, g.view) : "#bbb";
    const clock = g.clocks.get(p.local_id);
    return node("li", {
      class: `seat${p.local_id === g.turn && g.status === "RUNNING" ? " to-move" : ""}${p.state && p.state !== "ACTIVE" ? " replaced" : ""}`,
      "data-testid": `seat-${p.local_id}`, "data-state": p.state ?? "ACTIVE",
    },
    node("span", { class: "swatch", style: `background:${color}` }),
    node("span", { class: "seat-name" }, p.name),
    tags.length ? node("span", { class: "tags" }, tags.join(", ")) : null,
    detail ? node("span", { class: "home-count", "data-testid": `seat-detail-${p.local_id}` }, detail) : null,
    clock && clock.remaining !== null ? node("span", { class: `clock${clock.paused ? " paused" : ""}`, "data-clock": p.local_id, "data-testid": `clock-${p.local_id}`, role: "timer", "aria-label": `${p.name}'s clock` }, "") : null);
  }));
}

/** The clocks of the open game's seats, counting down between the server's reports (drawn 4 times
 * a second, and whenever the server reports them: the "clocks" panel). */
export function createClocksView(state) {
  function render() {
    const g = currentGame(state);
    if (!g) return;
    for (const span of document.querySelectorAll("[data-clock]")) {
      const local = Number(span.dataset.clock);
      const left = remaining(g, local);
      const clock = g.clocks.get(local);
      if (left === null) continue;
      const text = `${clock?.paused ? "⏸ " : ""}${formatClock(left)}`;
      if (span.textContent !== text) span.textContent = text;
      span.classList.toggle("low", left < 30);
      span.classList.toggle("running", Boolean(clock?.armed && !clock.paused && g.status === "RUNNING"));
    }
  }
  return { panel: "clocks", render };
}
