// "Games to watch": the running games the server lets this player observe (S17).

import { node } from "../../dom.js";

export function createWatchView(state, fx) {
  const list = document.getElementById("watch-games");
  function render() {
    const me = state.me?.player_id;
    const games = state.watchable.filter((o) => !(o.players ?? []).some((p) => p.player_id === me));
    list.replaceChildren(...(games.length ? games.map((o) => node("li", { class: "game-item", "data-testid": `watch-item-${o.game_id}` },
      node("div", { class: "game-name" }, `${state.catalogue.name(o.configuration.rules) ?? o.configuration.game_type} #${o.game_id}`),
      node("div", { class: "game-meta" }, (o.players ?? []).map((p) => p.name).join(" vs ")),
      state.games.get(o.game_id)?.observing
        ? node("button", { type: "button", "data-testid": `watch-${o.game_id}`, onclick: () => fx.draw(fx.select(o.game_id)) }, "Show")
        : node("button", { type: "button", "data-testid": `watch-${o.game_id}`, onclick: () => fx.send("StartObserveGameRequest", { game_id: o.game_id }) }, "Watch")))
      : [node("li", { class: "empty" }, "No games being played that you could watch.")]));
  }
  return { panel: "watch", render };
}
