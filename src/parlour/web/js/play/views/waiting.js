// The box above the board while a game waits: an invitation to answer, the invited who have not
// answered yet, the seats of an open game still free (with "Start now" for its creator), or an
// aborted game to confirm.

import { node } from "../../dom.js";
import { gameName, isInvitation } from "../model.js";
import { clockText } from "../words.js";

/** `view` is the game view's reading of the open game: {g, me, what, waiting}. */
export function renderWaiting(state, fx, { g, me, what, waiting }) {
  const box = document.getElementById("invitation-box");
  const aborted = g.status === "ABORTING" && !g.confirmed;
  box.hidden = !waiting && !aborted;
  if (waiting) {
    const parts = [];
    if (what.kind === "invite") {
      parts.push(node("p", {}, `${g.players[0]?.name ?? "Someone"} invites you to play ${gameName(state, g)} (${clockText(g.config)}).`),
        node("div", { class: "row" },
          node("button", { type: "button", class: "primary", "data-testid": "accept-invitation", onclick: () => fx.draw(fx.answer(g, true)) }, "Accept"),
          node("button", { type: "button", "data-testid": "decline-invitation", onclick: () => fx.draw(fx.answer(g, false)) }, "Decline")));
    } else if (isInvitation(state, g)) {
      parts.push(node("p", {}, `Waiting for ${g.players.filter((p) => p.kind === "HUMAN" && p.local_id !== me).map((p) => p.name).join(", ")} to accept. The game starts when everyone has.`));
    } else {
      const min = g.config?.min_players ?? 2;
      parts.push(node("p", {}, `Waiting for players: ${g.players.length} of ${g.config?.max_players ?? "?"} seats taken. It starts when full${me === 1 ? `, or when you start it (at least ${min})` : ""}.`));
      if (me === 1) {
        parts.push(node("button", {
          type: "button", class: "primary", "data-testid": "start-now", disabled: g.players.length < min,
          onclick: () => fx.send("LobbyStartGameRequest", { game_id: g.id }),
        }, "Start now"));
      }
    }
    box.replaceChildren(...parts);
  } else if (aborted) {
    box.replaceChildren(node("p", {}, "This game was aborted."),
      state.catalogue.game(g.config?.rules) && !state.replay ? node("button", { type: "button", "data-testid": "replay-aborted", onclick: () => fx.openReplay(g) }, "Replay") : null,
      node("button", { type: "button", class: "primary", "data-testid": "confirm-abort", onclick: () => {
        fx.send("GameAbortedConfirmationRequest", { game_id: g.id });
        g.confirmed = true;
        fx.draw(["games", "game", "chat"]);
      } }, "Confirm"));
  }
}
