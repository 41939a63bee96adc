// Apologies game records (GET /api/games/{id}) as the replay view shows them. Pure functions of
// the API's JSON, no DOM: the page and the tests import them alike.
//
// Step 0 is the position before the first move (`initial`); step k (1..moves.length) is the
// position after move k, that is `moves[k - 1].view`.

import { COLOR_ORDER, describeHistory, pawnKey, positionKey, positionLabel, titleCase } from "./apologies-moves.js";

/** Every position of a record, [{view, move}] (move null for step 0); none when it never started. */
export function replaySteps(record) {
  if (!record.initial) return [];
  return [{ view: record.initial, move: null }, ...record.moves.map((move) => ({ view: move.view, move }))];
}

/** Seat index -> colour. Seats take the colours in order (RED, YELLOW, GREEN, BLUE), which is
 * also the order of a view's `players`. */
export function seatColors(record) {
  const players = record.initial?.players ?? [];
  return record.seats.map((_, index) => players[index]?.color ?? COLOR_ORDER[index] ?? null);
}

/** Every pawn of a view, in the order of its players: a record's view lists `players`, a live
 * GAME_STATE_CHANGE has the `player` and its `opponents`. */
export function viewPawns(view) {
  if (!view) return [];
  const players = view.players ?? (view.player ? [view.player, ...(view.opponents ?? [])] : []);
  return players.flatMap((player) => player.pawns ?? []);
}

/** The pawns whose position differs between two views: [{key, color, from, to}] (position keys). */
export function pawnChanges(before, after) {
  const was = new Map(viewPawns(before).map((pawn) => [pawnKey(pawn), pawn]));
  const changes = [];
  for (const pawn of viewPawns(after)) {
    const old = was.get(pawnKey(pawn));
    if (old && positionKey(old) !== positionKey(pawn)) {
      changes.push({ key: pawnKey(pawn), pawn, from: positionKey(old), to: positionKey(pawn), old });
    }
  }
  return changes;
}

function pawnName(pawn) {
  return `${titleCase(pawn.color)}${pawn.id}`;
}

/** The changes as a move's line, `color`'s own pawns first (as describeMove words a move):
 * "Green3 safe 3 → home", "Red0 square 4 → square 9; sends Yellow1 to start". */
export function describeChanges(changes, color = null) {
  const own = changes.filter((c) => !color || c.pawn.color === color);
  const others = changes.filter((c) => color && c.pawn.color !== color);
  let text = own.map((c) => `${pawnName(c.pawn)} ${positionLabel(c.old)} → ${positionLabel(c.pawn)}`).join(", ");
  const bumped = others.filter((c) => c.pawn.start).map((c) => pawnName(c.pawn));
  const moved = others.filter((c) => !c.pawn.start).map((c) => `${pawnName(c.pawn)} → ${positionLabel(c.pawn)}`);
  if (moved.length) text += `${text ? "; " : ""}${moved.join(", ")}`;
  if (bumped.length) text += `${text ? "; " : ""}sends ${bumped.join(", ")} to start`;
  return text;
}

/** The handles of the winning seats (the result names seats by number). */
export function winnerHandles(summary) {
  const winners = summary.result?.winners ?? [];
  return winners.map((seat) => summary.seats[seat]?.handle).filter(Boolean);
}

const ENDINGS = {
  CANCELLED: "cancelled by its advertiser",
  NOT_VIABLE: "too few players were left",
  INACTIVE: "inactive for too long",
  SHUTDOWN: "the server shut down",
  ABORTED: "the server stopped during the game",
};

/** How a game ended, in words: "Game over: Aragorn (Green) won. Player Aragorn won after 48 turns." */
export function resultText(summary) {
  const winners = winnerHandles(summary);
  const comment = summary.result?.comment ?? "";
  if (summary.state === "COMPLETED" && winners.length) {
    const colors = seatColors(summary);
    const named = winners.map((handle) => {
      const seat = summary.seats.findIndex((s) => s.handle === handle);
      return colors[seat] ? `${handle} (${titleCase(colors[seat])})` : handle;
    });
    // As the game's own banner said it (app.js): "Game over: X won. Player X won after N turns".
    return `Game over: ${named.join(" and ")} won.${comment ? ` ${comment}.` : ""}`;
  }
  const reason = summary.result?.reason ?? summary.state;
  const why = ENDINGS[reason] ?? String(reason ?? "").toLowerCase();
  const state = summary.state === "ABORTED" ? "Game aborted" : summary.state === "CANCELLED" ? "Game cancelled" : "Game over";
  return `${state}${why ? `: ${why}` : ""}${comment ? ` (${comment})` : ""}.`;
}

/** What happened at step k of a record: {number, total, handle, color, robot, text, ending}.
 * `text` describes the move; `ending` is the closing history entry ("Game completed: …") when
 * the move ended the game. The last move's view carries that closing entry instead of the
 * move's own, so its move is told from the pawns that changed. */
export function stepInfo(record, steps, k) {
  const total = steps.length ? steps.length - 1 : 0;
  const step = steps[k];
  if (!step) return { number: 0, total, handle: null, color: null, robot: false, text: "", ending: "" };
  const action = step.view.action;
  if (!step.move) {
    return { number: 0, total, handle: null, color: null, robot: false, text: action ? describeHistory(action) : "Start", ending: "" };
  }
  const { move } = step;
  const color = seatColors(record)[move.seat] ?? action?.color ?? null;
  const robot = Boolean(record.seats[move.seat]?.robot);
  let text = "";
  let ending = "";
  if (move.kind !== "move") {
    text = `left the game (${move.kind})`;
  } else if (action && action.color) {
    text = describeHistory(action);
  } else {
    const changes = pawnChanges(steps[k - 1].view, step.view);
    text = changes.length ? `moved ${describeChanges(changes, color)}` : "moved";
    if (action) ending = describeHistory(action);
  }
  return { number: k, total, handle: move.handle, color, robot, text, ending };
}

/** The pawns that moved at step k, by key (for the board to mark). */
export function movedPawns(steps, k) {
  if (k < 1 || !steps[k]) return new Set();
  return new Set(pawnChanges(steps[k - 1].view, steps[k].view).map((c) => c.key));
}
