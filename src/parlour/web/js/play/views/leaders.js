// The leaderboard of one game (GET api/leaderboard), with the rating change of the last game seen.

import { node } from "../../dom.js";
import { profileLink } from "../../profile-link.js";
import { changeClass, ratingChange, ratingText } from "../words.js";

export function createLeadersView(state) {
  const $ = (id) => document.getElementById(id);
  function render() {
    const { rules, rows, shown } = state.leaders;
    if (rules !== null) $("leaders-game").value = rules;
    if (rows === null) return;
    $("leaderboard").replaceChildren(...(rows.length ? rows.map((p, i) => {
      const change = state.lastChange.get(`${shown}:${p.player_id}`);
      return node("tr", { class: p.player_id === state.me?.player_id ? "mine" : "", "data-testid": `leader-${p.name}` },
        node("td", {}, String(i + 1)), node("td", {}, profileLink(p.name, { "data-testid": `leader-name-${p.name}` })),
        node("td", { title: p.provisional ? "provisional: fewer than 5 games" : null }, ratingText(p)), node("td", {}, String(p.games)),
        node("td", { class: changeClass(change), "data-testid": `leader-change-${p.name}` }, ratingChange(change)));
    }) : [node("tr", {}, node("td", { colSpan: 5, class: "empty" }, "No ranked games yet."))]));
  }
  return { panel: "leaders", render };
}
