// Apologies under server rules (src/parlour/protocols/async_ws/game/rules.py): the classic page's
// ApologiesBoard, fed from the server-rules view (pawn positions as "start", "square N",
// "safe N", "home") and actions ("play 5: Red0 square 4->square 9[, ...]", "forfeit 10"),
// translated into the shapes apologies-moves.js indexes. Implements the server-rules board
// interface of ./index.js.

import { node } from "../dom.js";
import { describeMove, indexMoves } from "../apologies-moves.js";
import { ApologiesBoard, COLORS } from "./apologies.js";

const SEAT_COLORS = ["RED", "YELLOW", "GREEN", "BLUE"];

function card(face) {
  return face === "A" ? "CARD_APOLOGIES" : `CARD_${face}`;
}

/** A pawn object of the classic wire format from a colour, a pawn number and a position text. */
function pawn(color, id, where) {
  const found = { color, id: String(id), start: false, home: false, safe: null, square: null };
  if (where === "start") found.start = true;
  else if (where === "home") found.home = true;
  else {
    const [kind, n] = where.split(" ");
    found[kind] = Number(n);
  }
  return found;
}

/** "play 7: Red0 square 4->square 8, Red1 safe 0->safe 3" -> a move as indexMoves reads it. */
export function parseAction(action) {
  const forfeit = /^forfeit (\w+)$/.exec(action);
  if (forfeit) return { move_id: action, card: card(forfeit[1]), actions: [], side_effects: [] };
  const play = /^play (\w+): (.*)$/.exec(action);
  if (!play) return null;
  const actions = play[2].split(", ").map((step) => {
    const m = /^(Red|Yellow|Green|Blue)(\d) (.+)->(.+)$/.exec(step);
    if (!m) return null;
    const color = m[1].toUpperCase();
    return { start: pawn(color, m[2], m[3]), end: pawn(color, m[2], m[4]) };
  }).filter(Boolean);
  return { move_id: action, card: card(play[1]), actions, side_effects: [] };
}

export class ApologiesRulesBoard {
  static kind = "apologies";

  static seatColor(localId) {
    return COLORS[SEAT_COLORS[(localId - 1) % 4]];
  }

  static seatDetail(view, localId) {
    const player = view?.players?.find((p) => p.id === localId);
    if (!player) return "";
    return `${player.pawns.filter((p) => p === "home").length}/4 home`;
  }

  constructor(host, { onAction = () => {} } = {}) {
    this.onAction = onAction;
    this.selected = null;
    this.choices = [];
    this.scene = null;
    const boardHost = node("div", { class: "apologies-host" });
    this.choicesBox = node("div", { class: "choices", "data-testid": "choices" });
    this.hint = node("p", { class: "hint board-hint", "data-testid": "board-hint" });
    host.replaceChildren(boardHost, this.hint, this.choicesBox);
    this.board = new ApologiesBoard(boardHost, {
      onPawn: (key) => {
        this.selected = this.selected === key ? null : key;
        this.choices = [];
        this.render(this.scene);
      },
      onTarget: (target) => {
        if (target.moves.length === 1) this.commit(target.moves[0]);
        else {
          this.choices = target.moves;
          this.render(this.scene);
        }
      },
    });
  }

  commit(move) {
    this.selected = null;
    this.choices = [];
    this.onAction(move.move_id);
  }

  render(scene) {
    this.scene = scene;
    const { view, legal = [], me = null } = scene;
    if (!view) return;
    this.board.svg.setAttribute("data-legal", JSON.stringify(legal));
    const myColor = me ? SEAT_COLORS[(me - 1) % 4] : null;
    const moves = legal.map(parseAction).filter(Boolean);
    const index = indexMoves(moves, myColor);
    if (this.selected && !index.byPawn.has(this.selected)) this.selected = null;
    if (!legal.length) this.choices = [];
    const pawns = view.players.flatMap((player) => player.pawns.map((where, i) => pawn(player.color, i, where)));
    const movable = new Map([...index.byPawn].map(([key, places]) => [key, [...places.keys()]]));
    const targets = this.selected ? [...index.byPawn.get(this.selected).values()] : [];
    const last = [...(view.recent ?? [])].reverse().find((entry) => /^(play|forfeit) /.test(entry.action));
    const shown = view.card ?? (last ? /^(?:play|forfeit) (\w+)/.exec(last.action)[1] : null);
    this.board.render({
      pawns, movable, selected: this.selected, targets,
      card: shown ? card(shown) : null, caption: view.card ? (legal.length ? "your card" : "card drawn") : shown ? "last card" : "",
    });
    let choices = this.choices;
    if (legal.length && !index.byPawn.size) choices = index.forfeits;
    this.choicesBox.replaceChildren(...choices.map((move) => node("button", {
      type: "button", class: "choice", "data-testid": "choice", "data-action": move.move_id, onclick: () => this.commit(move),
    }, describeMove(move))));
    let hint = "";
    if (legal.length) {
      if (choices.length && !index.byPawn.size) hint = "No pawn can move: discard the card to end your turn.";
      else if (choices.length) hint = "Several moves take that pawn there: pick one.";
      else if (this.selected) hint = "Now pick where it goes (the dashed rings), or another pawn.";
      else hint = "Pick a pawn to move.";
    }
    this.hint.textContent = hint;
    this.hint.hidden = !hint;
  }
}
