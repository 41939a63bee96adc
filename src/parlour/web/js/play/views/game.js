// The open game: its title and settings, whose turn it is, the buttons, the recent moves; the
// seats, the waiting box, the outcome and the board are drawn by their own modules.

import { node } from "../../dom.js";
import { rulesBoardClass } from "../../boards/index.js";
import { currentGame, gameName, myLocal, news, rulesOf, seatName } from "../model.js";
import { clockText, describeAction } from "../words.js";
import { createBoardView } from "./board.js";
import { renderOutcome } from "./outcome.js";
import { renderSeats } from "./seats.js";
import { renderWaiting } from "./waiting.js";

/** The sentence above the seats: whose turn it is, as this player should read it. */
function turnText(state, { g, me, mySeat, what, myTurn }) {
  if (g.status === "RUNNING") {
    let turn = what.text;
    if (myTurn) turn = "Your turn";
    else if (g.sent) turn = "Move sent…";
    else if (g.turn === me && mySeat?.state !== "ACTIVE" && mySeat?.state) turn = "A robot plays your seat";
    else if (g.turn === me) turn = "Your turn (loading…)";
    else if (g.turn) {
      const seat = g.players.find((p) => p.local_id === g.turn);
      turn = seat?.kind === "ROBOT" || (seat?.state && seat.state !== "ACTIVE") ? `A robot plays for ${seatName(g, g.turn)}` : `Waiting for ${seatName(g, g.turn)}`;
    }
    return g.paused ? `${turn} · clock paused ⏸` : turn;
  }
  if (g.status === "OUTCOME" || g.status === "OVER") return "Game over";
  if (g.status === "ABORTING" || g.status === "ABORTED") return g.events.at(-1) ?? "Game aborted";
  return what.text;
}

function metaText(g) {
  const meta = [];
  if (g.config) {
    meta.push(`${g.config.max_players} seats`, clockText(g.config), g.config.ranked ? "ranked" : "not ranked");
    if (g.config.private) meta.push("password");
    if (g.config.options?.mode === "ADULT") meta.push("adult");
    if (g.config.robot_level) meta.push(`${g.config.robot_level} robots`);
  }
  if (g.turnIndex) meta.push(`turn ${g.turnIndex}`);
  return meta.join(" · ");
}

/** `clocks` is the clocks view (seats.js), drawn with the seats. */
export function createGameView(state, fx, clocks) {
  const $ = (id) => document.getElementById(id);
  const board = createBoardView(state, fx);

  /** What every part of the view reads of the open game `g`. */
  function read(g) {
    const me = myLocal(state, g);
    const rules = rulesOf(g);
    const what = news(state, g);
    return {
      g, me, rules, what,
      mySeat: g.players.find((p) => p.local_id === me),
      Board: rulesBoardClass(rules),
      myTurn: g.status === "RUNNING" && g.turn === me && g.legal.length > 0 && !g.sent,
      waiting: g.status === "NOT_STARTED" && !g.observing,
    };
  }

  function render() {
    const g = currentGame(state);
    $("no-game").hidden = Boolean(g);
    $("game-body").hidden = !g;
    $("app").classList.toggle("with-game", Boolean(g));
    if (!g) {
      board.render(null);
      return;
    }
    const view = read(g);
    $("game").dataset.gameId = String(g.id);
    $("game").dataset.turnIndex = String(g.turnIndex);
    $("game").dataset.status = g.status;
    $("game-title").textContent = `${gameName(state, g)} #${g.id}`;
    $("game-meta").textContent = metaText(g);
    $("turn").textContent = turnText(state, view);
    $("turn").className = `turn${view.myTurn ? " mine" : ""}`;

    // Forfeit while playing; leave (or cancel, for its creator) while it waits.
    const live = !g.observing && g.status === "RUNNING" && view.mySeat?.state !== "FORFEITED" && view.mySeat?.state !== "TIMED_OUT";
    $("forfeit").hidden = !(live || view.waiting);
    $("forfeit").textContent = view.waiting ? (view.me === 1 ? "Cancel game" : "Leave") : "Forfeit";
    if (!live) $("forfeit-confirm").hidden = true;

    renderSeats(g, view.me, view.Board);
    clocks.render();
    renderWaiting(state, fx, view);
    renderOutcome(state, view);
    board.render(view);

    // Last moves and events.
    const recent = (g.view?.recent ?? []).map((entry) => `${seatName(g, entry.id)} ${describeAction(entry.action)}`);
    const lines = [...g.events.slice(-4), ...recent].reverse();
    $("recent").replaceChildren(...lines.map((line) => node("li", {}, line)));
    $("recent").closest("details").hidden = !lines.length;
  }
  return { panel: "game", render };
}
