// Apologies moves, cards and history as the page shows them. Pure functions of protocol values
// (docs/apologies-protocol.md, "A turn" and "Game history"), no DOM: the page and the tests import
// them alike.

export const COLOR_ORDER = ["RED", "YELLOW", "GREEN", "BLUE"];

const CARD_HELP = {
  CARD_1: "Leave start, or move 1",
  CARD_2: "Leave start, or move 2; then draw again",
  CARD_3: "Move 3",
  CARD_4: "Move 4 backward",
  CARD_5: "Move 5",
  CARD_7: "Move 7, or split 7 between two pawns",
  CARD_8: "Move 8",
  CARD_10: "Move 10, or 1 backward",
  CARD_11: "Move 11, or swap places with an opponent",
  CARD_12: "Move 12",
  CARD_APOLOGIES: "Leave start onto an opponent's square and send it back to start",
};

export function cardFace(card) {
  if (!card) return "";
  return card === "CARD_APOLOGIES" ? "A" : card.replace("CARD_", "");
}

export function cardHelp(card) {
  return CARD_HELP[card] ?? "";
}

export function titleCase(color) {
  return color ? color[0] + color.slice(1).toLowerCase() : "";
}

export function pawnKey(pawn) {
  return `${pawn.color}-${pawn.id}`;
}

/** A pawn's position (exactly one of start, home, safe, square is set). */
export function positionKey(pawn) {
  if (pawn.start) return "start";
  if (pawn.home) return "home";
  if (pawn.safe !== null && pawn.safe !== undefined) return `safe-${pawn.safe}`;
  return `square-${pawn.square}`;
}

export function positionLabel(pawn) {
  return positionKey(pawn).replace("-", " ");
}

function pawnName(pawn) {
  return `${titleCase(pawn.color)}${pawn.id}`;
}

/** One line for a move: its card, each action from -> to, and who it sends back to start. */
export function describeMove(move) {
  const card = cardFace(move.card);
  if (!move.actions.length) return `Discard ${card} (no legal move)`;
  const steps = move.actions.map((a) => `${pawnName(a.start)} ${positionLabel(a.start)} → ${positionLabel(a.end)}`);
  const bumped = move.side_effects.filter((a) => a.end.start).map((a) => pawnName(a.start));
  const others = move.side_effects.filter((a) => !a.end.start).map((a) => `${pawnName(a.start)} → ${positionLabel(a.end)}`);
  let text = `${card}: ${steps.join(", ")}`;
  if (others.length) text += `; ${others.join(", ")}`;
  if (bumped.length) text += `; sends ${bumped.join(", ")} to start`;
  return text;
}

/** The turn's moves indexed for clicking: own pawn -> destination -> the moves taking it there.
 * Every own pawn that moves counts (both halves of a 7 split; an 11 swap or an Apologies card is
 * found from the own pawn). Forfeit moves (no actions) are returned apart. `card` keeps only the
 * moves of one card (ADULT hands). */
export function indexMoves(moves, myColor, card = null) {
  const byPawn = new Map();
  const forfeits = [];
  for (const move of moves) {
    if (card && move.card !== card) continue;
    if (!move.actions.length) {
      forfeits.push(move);
      continue;
    }
    for (const action of move.actions) {
      if (action.start.color !== myColor) continue;
      const pawn = pawnKey(action.start);
      if (!byPawn.has(pawn)) byPawn.set(pawn, new Map());
      const targets = byPawn.get(pawn);
      const key = positionKey(action.end);
      if (!targets.has(key)) targets.set(key, { key, position: action.end, moves: [] });
      const bucket = targets.get(key).moves;
      if (!bucket.includes(move)) bucket.push(move);
    }
  }
  return { byPawn, forfeits };
}

/** The colour that moves next, or null when it cannot be known from the history alone (the first
 * player is random). A played 2 draws again; a forfeited one does not. */
export function nextColor(history, colors) {
  if (!history.length || history.at(-1).action.startsWith("Game completed")) return null;
  const last = [...history].reverse().find((entry) => entry.color);
  if (!last || !colors.length) return null;
  if (last.card === "CARD_2" && last.action.startsWith("Played")) return last.color;
  const seated = COLOR_ORDER.filter((c) => colors.includes(c));
  return seated[(seated.indexOf(last.color) + 1) % seated.length];
}

/** History text for people: "Played card 7: [ Red0->square 11, ]" -> "played 7: Red0 → square 11". */
export function describeHistory(entry) {
  const played = /^Played card (\w+): \[ (.*?),? \]$/.exec(entry.action);
  if (played) {
    const parts = played[2].split(", ").map((p) => p.replace("->", " → "));
    return `played ${played[1]}: ${parts.join(", ")}`;
  }
  const forfeit = /^Turn is forfeit; discarded card (\w+)$/.exec(entry.action);
  if (forfeit) return `had no move and discarded ${forfeit[1]}`;
  return entry.action.replace("GameMode.", "");
}

// Each colour's turn square, the last board square before its safe zone.
const TURN_SQUARE = { RED: 2, BLUE: 17, YELLOW: 32, GREEN: 47 };

/** How many squares a pawn still has to go to reach home (leaving start counts as one). */
export function stepsToHome(pawn) {
  if (pawn.home) return 0;
  if (pawn.start) return 65;
  if (pawn.safe !== null && pawn.safe !== undefined) return 5 - pawn.safe;
  return ((TURN_SQUARE[pawn.color] - pawn.square + 60) % 60) + 6;
}

/** The final standings of a game's players (wire player objects with color and pawns): the winner
 * first, then the most pawns home, then the fewest squares left to go. `handleOf(color)` names them. */
export function standings(players, winner, handleOf) {
  return players.map((player) => ({
    color: player.color,
    handle: handleOf(player.color),
    home: player.pawns.filter((pawn) => pawn.home).length,
    left: player.pawns.reduce((sum, pawn) => sum + stepsToHome(pawn), 0),
  })).sort((a, b) => (b.handle === winner) - (a.handle === winner) || b.home - a.home || a.left - b.left);
}
