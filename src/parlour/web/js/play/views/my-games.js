// "My games": every game of the player, what is new in each first (model.js news), with the
// answers to invitations.

import { node } from "../../dom.js";
import { NEWS_ORDER, gameName, news } from "../model.js";
import { clockText } from "../words.js";

export function createMyGamesView(state, fx) {
  const list = document.getElementById("my-games");
  function render() {
    const games = [...state.games.values()].filter((g) => g.config || g.view);
    if (!games.length) {
      list.replaceChildren(node("li", { class: "empty" }, "No games yet: create one below, or accept an invitation."));
      return;
    }
    games.sort((a, b) => NEWS_ORDER[news(state, a).kind] - NEWS_ORDER[news(state, b).kind] || b.id - a.id);
    list.replaceChildren(...games.map((g) => {
      const what = news(state, g);
      const others = g.players.filter((p) => p.player_id !== state.me?.player_id).map((p) => p.name);
      const current = g.id === state.current;
      const item = node("li", { class: `my-game news-${what.kind}${current ? " current" : ""}`, "data-testid": `my-game-${g.id}`, "data-news": what.kind },
        node("button", {
          type: "button", class: "open-game", "data-testid": `open-game-${g.id}`, "aria-current": current ? "true" : null,
          onclick: () => fx.draw(fx.select(g.id)),
        },
        node("span", { class: "game-name" }, `${gameName(state, g)} #${g.id}`),
        node("span", { class: "game-meta" }, others.length ? `with ${others.join(", ")}` : "waiting for players",
          g.config?.clock_seconds ? ` · ${clockText(g.config)}` : ""),
        node("span", { class: `badge news ${what.kind}`, "data-testid": `news-${g.id}` }, what.text)));
      if (what.kind === "invite") {
        item.append(node("div", { class: "row answer" },
          node("button", { type: "button", class: "primary", "data-testid": `accept-${g.id}`, onclick: () => fx.draw(fx.answer(g, true)) }, "Accept"),
          node("button", { type: "button", "data-testid": `decline-${g.id}`, onclick: () => fx.draw(fx.answer(g, false)) }, "Decline")));
      }
      return item;
    }));
  }
  return { panel: "games", render };
}
