// "Quick play": one button per game of the server's, which puts the player in its queue (seats,
// ranked, robots after a wait as chosen), and the queues the player waits in, each with the time
// waited (counted here between the server's pushes) and the rating window the server shows.

import { node } from "../../dom.js";
import { queueKey } from "../updates-quick.js";

const $ = (id) => document.getElementById(id);

function waited(seconds) {
  const whole = Math.max(0, Math.floor(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

export function createQuickView(state, fx) {
  function join(rules) {
    const seats = Number($(`quick-seats-${rules}`)?.value) || state.catalogue.seatRange(rules)?.[0] || 2;
    const fields = { game_type: rules, seats, ranked: $("quick-ranked").checked };
    const robots = $("quick-robots").value;
    if (robots !== "never") fields.robots_after = Number(robots);
    state.quickJoins.set(queueKey(fields), fields);
    fx.send("QuickPlayJoinRequest", fields);
  }

  /** The buttons, once the catalogue has come. */
  function showGames() {
    $("quick-games").replaceChildren(...state.catalogue.games.map((g) => {
      const seats = Array.from({ length: g.max_seats - g.min_seats + 1 }, (_, i) => g.min_seats + i);
      return node("li", { class: "quick-game" },
        node("button", { type: "button", class: "primary", "data-testid": `quick-${g.rules}`, onclick: () => join(g.rules) }, `Quick play ${g.name}`),
        node("label", { class: "visually-hidden", for: `quick-seats-${g.rules}` }, `Seats for ${g.name}`),
        node("select", { id: `quick-seats-${g.rules}`, "data-testid": `quick-seats-${g.rules}`, title: "Players" },
          ...seats.map((n) => node("option", { value: String(n) }, `${n} players`))));
    }));
  }

  function render() {
    const queues = [...state.queues.values()];
    const now = performance.now();
    $("quick-queues").replaceChildren(...queues.map((q) => {
      const name = state.catalogue.name(q.game_type) ?? q.game_type;
      const since = (q.waited_seconds ?? 0) + (now - q.at) / 1000;
      const robots = q.robots_in_seconds === undefined || q.robots_in_seconds === null
        ? "people only"
        : `robots in ${Math.max(0, Math.ceil(q.robots_in_seconds - (now - q.at) / 1000))} s`;
      const key = queueKey(q);
      return node("li", { class: "quick-queue", "data-testid": `queue-${q.game_type}-${q.seats}` },
        node("span", { class: "game-name" }, `${name}, ${q.seats} players${q.ranked ? ", ranked" : ""}`),
        node("span", { class: "game-meta" },
          "waited ", node("span", { "data-testid": `queue-waited-${q.game_type}-${q.seats}` }, waited(since)),
          " · ratings ", node("span", { "data-testid": `queue-window-${q.game_type}-${q.seats}` }, q.shown_low != null ? `${q.shown_low} to ${q.shown_high}` : `${q.window_low.toFixed(1)} to ${q.window_high.toFixed(1)}`),
          ` · ${robots}`),
        node("button", {
          type: "button", class: "quiet", "data-testid": `queue-leave-${q.game_type}-${q.seats}`,
          onclick: () => {
            state.quickJoins.delete(key);
            fx.send("QuickPlayLeaveRequest", { game_type: q.game_type, seats: q.seats, ranked: Boolean(q.ranked) });
          },
        }, "Leave"));
    }));
    $("quick-waiting").hidden = queues.length === 0;
  }
  return { panel: "quick", render, showGames };
}
