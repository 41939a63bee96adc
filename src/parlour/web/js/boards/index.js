// Boards by game. Two families share this registry:
//
// - The classic Apologies page (app.js, replay.js): createBoard("apologies", host, {onPawn(key),
//   onTarget(target)}) and render(scene) with the scene of ./apologies.js.
// - The accounts page (play.js; play/views/board.js), games with server rules
//   (src/parlour/protocols/async_ws/game/rules.py):
//   createRulesBoard(rules, host, {onAction(action)}), then render({view, legal, me}) where `view`
//   is the seat's view (parsed JSON), `legal` its legal_actions (strings; [] when not to move) and
//   `me` its local id. A click on the board calls onAction with one of `legal` verbatim. Each such
//   board class also has static seatColor(localId, view) and seatDetail(view, localId) (a short text
//   for the seat list: score, state), and puts the board's data-legal (JSON of `legal`) on its SVG.
//
// Another game's board is one more module registered here.

import { ApologiesBoard } from "./apologies.js";
import { ApologiesRulesBoard } from "./apologies-rules.js";
import { FishBoard } from "./fish.js";
import { TsuroBoard } from "./tsuro.js";

const BOARDS = new Map();
const RULES_BOARDS = new Map();

export function registerBoard(boardClass) {
  BOARDS.set(boardClass.kind, boardClass);
}

export function registerRulesBoard(boardClass) {
  RULES_BOARDS.set(boardClass.kind, boardClass);
}

export function createBoard(kind, host, handlers) {
  const Board = BOARDS.get(kind);
  if (!Board) throw new Error(`no board for ${kind}`);
  return new Board(host, handlers);
}

/** The board class of a server-rules game (for its static seatColor and seatDetail), or null. */
export function rulesBoardClass(rules) {
  return RULES_BOARDS.get(rules) ?? null;
}

export function createRulesBoard(rules, host, handlers) {
  const Board = RULES_BOARDS.get(rules);
  if (!Board) throw new Error(`no board for ${rules}`);
  return new Board(host, handlers);
}

registerBoard(ApologiesBoard);
registerRulesBoard(ApologiesRulesBoard);
registerRulesBoard(FishBoard);
registerRulesBoard(TsuroBoard);
