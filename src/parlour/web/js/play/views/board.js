// The open game's board (boards/ draws each game's; clicks on it commit actions) and, while a
// replay is open, the bar that steps through it with the board showing that step.

import { createRulesBoard } from "../../boards/index.js";
import { seatName } from "../model.js";
import { describeAction } from "../words.js";

export function createBoardView(state, fx) {
  const $ = (id) => document.getElementById(id);
  const host = $("board-host");
  let board = null; // {id, rules, board}: the board drawn in host, kept while it shows the same game

  function ensureBoard(g, rules) {
    if (!board || board.id !== g.id || board.rules !== rules) {
      const id = g.id;
      board = { id, rules, board: createRulesBoard(rules, host, { onAction: (action) => {
        const shown = state.games.get(id);
        if (shown) fx.draw(fx.commit(shown, action));
      } }) };
    }
    return board.board;
  }

  function clear() {
    if (board) {
      host.replaceChildren();
      board = null;
    }
  }

  function renderReplayBar(g, r) {
    $("replay-bar").hidden = !r;
    if (!r) return;
    const total = r.data.moves.length;
    const move = r.step ? r.data.moves[r.step - 1] : null;
    $("replay-step").textContent = move ? `Move ${r.step} of ${total}: ${seatName(g, move.seat)} ${describeAction(move.action)}` : `Start (${total} moves)`;
    $("replay-bar").dataset.step = String(r.step);
    $("replay-bar").dataset.total = String(total);
    $("replay-first").disabled = $("replay-prev").disabled = r.step === 0;
    $("replay-next").disabled = $("replay-last").disabled = r.step === total;
  }

  /** The board of the open game `g` (none: clear it); `view` is the game view's reading of it. */
  function render(view) {
    if (!view) {
      clear();
      return;
    }
    const { g, me, rules, Board, myTurn } = view;
    const r = state.replay && state.replay.id === g.id ? state.replay : null;
    renderReplayBar(g, r);
    if (r && Board) {
      const shown = r.step ? r.data.moves[r.step - 1].view : r.data.initial;
      ensureBoard(g, rules).render({ view: shown, legal: [], me });
      host.hidden = false;
    } else if (g.view && Board) {
      ensureBoard(g, rules).render({ view: g.view, legal: myTurn ? g.legal : [], me });
      host.hidden = false;
    } else {
      host.hidden = true;
      clear();
    }
  }
  return { render };
}
