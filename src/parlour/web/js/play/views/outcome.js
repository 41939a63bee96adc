// The result of a finished game: the ranks, scores and rating changes, and what to do next.

import { node } from "../../dom.js";
import { news, seatName } from "../model.js";
import { profileLink } from "../../profile-link.js";
import { changeClass, ratingChange, ratingText } from "../words.js";

/** A seat's name, linked to the profile when an account sits there (not a robot). */
function outcomeName(g, localId) {
  const seat = g.players?.find((p) => p.local_id === localId);
  const name = seatName(g, localId);
  return seat?.player_id && seat.kind !== "ROBOT" ? profileLink(name) : name;
}

export function renderOutcome(state, { g, me }) {
  const $ = (id) => document.getElementById(id);
  const over = (g.status === "OUTCOME" || g.status === "OVER") && g.outcome;
  $("outcome").hidden = !over;
  if (!over) return;
  const ranked = [...g.outcome].sort((a, b) => a.rank - b.rank);
  $("outcome-rows").replaceChildren(...ranked.map((entry) => node("tr", { class: entry.player_id === me ? "mine" : "", "data-testid": `outcome-${entry.player_id}` },
    node("td", {}, String(entry.rank)),
    node("td", {}, outcomeName(g, entry.player_id), entry.player_id === me ? " (you)" : ""),
    node("td", {}, String(entry.score)),
    node("td", { class: changeClass(entry.shown?.change), "data-testid": `outcome-rating-${entry.player_id}` },
      entry.shown ? `${ratingText(entry.shown)} ` : "", node("span", { class: "change" }, ratingChange(entry.shown?.change, entry.shown ? "" : "—"))))));
  const mine = g.outcome.find((e) => e.player_id === me);
  const best = Math.min(...g.outcome.map((e) => e.rank));
  const tied = g.outcome.filter((e) => e.rank === best).length > 1;
  $("outcome-title").textContent = !mine ? "Game over"
    : mine.rank === best ? (tied ? "You won, tied for first place!" : "You won!") : `Game over: you finished #${mine.rank}`;
  const unseen = news(state, g).kind === "outcome";
  $("confirm-outcome").hidden = !unseen || g.observing;
  $("rematch").hidden = g.observing || !g.config;
  $("replay").hidden = Boolean(state.replay);
  $("outcome-note").textContent = unseen ? "Confirm that you saw the result: the game then leaves your list when everyone has." : "Confirmed.";
}
