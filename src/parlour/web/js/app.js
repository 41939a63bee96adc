// Parlour's Apologies page: registration, lobby, chat and the game view. Protocol details live in
// protocol.js, move logic in apologies-moves.js, drawing in boards/. Event and request names and
// shapes: docs/apologies-protocol.md.

import { ApologiesClient, socketUrl } from "./protocol.js";
import { createBoard } from "./boards/index.js";
import { node } from "./dom.js";
import { setupReplays } from "./replay.js";
import { pawnChanges, viewPawns } from "./apologies-replay.js";
import {
  COLOR_ORDER, cardFace, cardHelp, describeHistory, describeMove, indexMoves, nextColor, standings, titleCase,
} from "./apologies-moves.js";

const $ = (id) => document.getElementById(id);

// The handle and player id survive reloads so that the page can send REREGISTER_PLAYER; the game
// the player was in is kept to explain what a reload did to it.
const KEYS = { handle: "parlour.apologies.handle", id: "parlour.apologies.player_id", game: "parlour.apologies.game" };

const REASONS = {
  INVALID_REQUEST: "Invalid request",
  DUPLICATE_USER: "Handle already in use",
  INVALID_AUTH: "Not authorised",
  WEBSOCKET_LIMIT: "Too many connections",
  USER_LIMIT: "Too many players",
  GAME_LIMIT: "Too many games",
  INVALID_PLAYER: "Unknown player",
  INVALID_GAME: "Game not available",
  NOT_PLAYING: "You are not in a game",
  NOT_ADVERTISER: "Only the advertiser can do that",
  ALREADY_PLAYING: "You are already in a game",
  NO_MOVE_PENDING: "It is not your turn",
  ILLEGAL_MOVE: "Illegal move",
  ADVERTISER_MAY_NOT_QUIT: "The advertiser cannot quit (cancel the game instead)",
  INTERNAL_ERROR: "Server error",
};

const CANCEL_REASONS = {
  CANCELLED: "cancelled by its advertiser",
  NOT_VIABLE: "too few players left",
  INACTIVE: "inactive for too long",
  SHUTDOWN: "the server is shutting down",
};

// How long each move stays on screen before the next one is shown (ms; ?pace=N to change it).
// Robots answer at once, so several moves arrive together: each is shown in turn, its pawn gliding
// and its player highlighted, rather than all of them landing between two clicks.
const PACE = paceSetting(new URLSearchParams(location.search).get("pace"));

function paceSetting(text) {
  const value = Number(text ?? "");
  return text !== null && Number.isFinite(value) && value >= 0 ? Math.min(value, 5000) : 700;
}

const REDUCED_MOTION = window.matchMedia("(prefers-reduced-motion: reduce)");
const client = new ApologiesClient(socketUrl());
const state = { me: null, resuming: false, players: [], games: [], invitations: new Map(), messages: [], game: null };
let board = null;
let refreshTimer = null;
let listedBusy = null;

// Past games and replays (replay.js): a replay takes the game's place beside the lobby; it cannot
// be opened while a game is being played, and a game that starts closes it.
const replays = setupReplays({
  handle: () => state.me?.handle ?? null,
  busy: () => Boolean(state.game && state.game.phase !== "over"),
  onOpen: () => {
    if (state.game && state.game.phase === "over") state.game = null;
  },
  onChange: () => render(),
  showError,
});
// /?replay=ID (the admin page's Watch link): that game's record so far, as a replay.
const REPLAY_ASKED = new URLSearchParams(location.search).get("replay");
if (REPLAY_ASKED) replays.open(REPLAY_ASKED);

// ---------------------------------------------------------------- small helpers

function act(request) {
  try {
    request();
  } catch (error) {
    showError("Not sent", error.message);
  }
}

/** Words compared loosely, so that a comment repeating its title is said once. */
function same(a, b) {
  const words = (text) => String(text ?? "").toLowerCase().replace(/[^a-z0-9]+/g, " ").replace(/\b(is|request failed)\b/g, "").replace(/\s+/g, " ").trim();
  return words(a) === words(b) || words(a).endsWith(words(b));
}

function showError(title, comment, reason = "", action = null) {
  const box = $("errors");
  // One error is said once: a repeat of the same reason replaces the older copy.
  if (reason) for (const old of box.querySelectorAll(`[data-reason='${reason}']`)) old.remove();
  const item = node("div", { class: "error", "data-testid": "error", "data-reason": reason },
    node("strong", {}, title), comment && !same(title, comment) ? `: ${comment}` : "", action,
    node("button", { type: "button", class: "dismiss", title: "Dismiss", "data-testid": "dismiss-error", onclick: () => item.remove() }, "×"));
  box.prepend(item);
  while (box.children.length > 4) box.lastChild.remove();
}

function showNotice(text) {
  const box = $("notice");
  box.replaceChildren(node("span", {}, text),
    node("button", { type: "button", class: "dismiss", title: "Dismiss", onclick: () => { box.hidden = true; } }, "×"));
  box.hidden = false;
}

function addMessage(kind, text, extra = null) {
  state.messages.unshift({ kind, text, extra, at: new Date() });
  state.messages.length = Math.min(state.messages.length, 50);
  renderMessages();
}

function handles(text) {
  return text.split(/[\s,]+/).map((h) => h.trim()).filter(Boolean);
}

function refreshLobby() {
  // Several events often arrive together (join, player change, start): ask once for all of them.
  if (refreshTimer !== null) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    if (client.connected && state.me) {
      client.listPlayers();
      client.listGames();
    }
  }, 50);
}

function rememberGame(game) {
  if (game) localStorage.setItem(KEYS.game, JSON.stringify({ id: game.id, name: game.name, mode: game.mode, advertiser: game.advertiser }));
  else localStorage.removeItem(KEYS.game);
}

function storedGame() {
  try {
    return JSON.parse(localStorage.getItem(KEYS.game) ?? "null");
  } catch {
    return null;
  }
}

function newGame({ id, name = "Apologies", mode = "STANDARD", advertiser = null, phase }) {
  return { id, name, mode, advertiser, phase, seats: [], view: null, turn: null, sent: false, selected: null, card: null, choices: [], outcome: null, lastMove: null, moves: 0 };
}

// Game events are applied in order through one queue; a move shown holds the queue for PACE ms so
// that it can be seen before the next move (or the turn, or the end) is shown.
const paced = [];
let pacing = false;

function inOrder(apply, hold = false) {
  paced.push([apply, hold]);
  if (!pacing) drainPaced();
}

async function drainPaced() {
  pacing = true;
  while (paced.length) {
    const [apply, hold] = paced.shift();
    // The next event (often a robot's move a few ms later) waits even if it has not arrived yet.
    if (apply() && hold && PACE > 0) await new Promise((done) => setTimeout(done, PACE));
  }
  pacing = false;
}

// ---------------------------------------------------------------- connection and registration

client.on("open", () => {
  $("connection").textContent = "connected";
  $("connection").className = "pill ok";
  $("reconnect").hidden = true;
  const id = localStorage.getItem(KEYS.id);
  const handle = localStorage.getItem(KEYS.handle);
  if (id && handle) {
    state.resuming = true;
    act(() => client.reregister(id, handle));
  } else {
    showRegister();
  }
});

client.on("close", ({ code }) => {
  $("connection").textContent = `disconnected${code ? ` (${code})` : ""}`;
  $("connection").className = "pill bad";
  $("reconnect").hidden = false;
  state.me = null;
  client.playerId = null;
  if (state.game && state.game.phase !== "over") {
    finish({ kind: "disconnected" });
  }
});

client.on("garbled", (text) => showError("Unreadable message from the server", text));

function showRegister() {
  $("register").hidden = false;
  $("app").hidden = true;
  $("sign-out").hidden = true;
  $("who").textContent = "";
  const handle = localStorage.getItem(KEYS.handle);
  if (handle && !$("handle").value) $("handle").value = handle;
  $("handle").focus();
}

client.on("PLAYER_REGISTERED", (m) => {
  const previous = localStorage.getItem(KEYS.id);
  state.me = { id: m.player_id, handle: m.context.handle };
  client.playerId = m.player_id;
  localStorage.setItem(KEYS.id, m.player_id);
  localStorage.setItem(KEYS.handle, m.context.handle);
  if (state.resuming && previous && previous !== m.player_id) {
    // An unknown id registers anew: the server no longer knew this player.
    showNotice(`The server did not know you any more (it may have restarted), so you are registered again as ${m.context.handle}.`);
  }
  $("who").textContent = m.context.handle;
  $("register").hidden = true;
  $("app").hidden = false;
  $("sign-out").hidden = false;
  refreshLobby();
  render();
  replays.renderList();
});

client.on("PLAYER_UNREGISTERED", () => {
  localStorage.removeItem(KEYS.id);
  rememberGame(null);
  state.me = null;
  state.game = null;
  client.playerId = null;
  replays.close(false);
  showNotice("You are signed out; your handle is free again.");
  showRegister();
});

client.on("REQUEST_FAILED", (m) => {
  const { reason, comment } = m.context;
  if (reason === "DUPLICATE_USER" && !state.me) {
    // Usually this browser's own closed tab, whose handle the server keeps for a while: say so
    // once, and offer the quickest way back in (a handle that is free now).
    const wanted = $("handle").value.trim() || "player";
    const other = `${wanted.slice(0, 18)}${Math.floor(2 + Math.random() * 97)}`;
    showError("This handle is in use", "a tab closed a moment ago keeps it for up to 30 minutes. Reopen that tab, or play now under another handle", reason,
      node("button", { type: "button", class: "primary", "data-testid": "use-other-handle", onclick: (event) => {
        event.currentTarget.closest(".error").remove();
        $("handle").value = other;
        $("handle").focus();
      } }, `Use ${other}`));
    if (state.resuming) localStorage.removeItem(KEYS.id);
    state.resuming = false;
    showRegister();
    return;
  }
  showError(`Request failed: ${REASONS[reason] ?? reason}`, comment, reason);
  if (!state.me) {
    if (state.resuming && reason === "DUPLICATE_USER") localStorage.removeItem(KEYS.id);
    state.resuming = false;
    showRegister();
  }
  const game = state.game;
  if (game && game.sent) {
    // The move was refused: the turn (if still ours) is offered again.
    game.sent = false;
    // After a resume the server has now said it is not our turn: the next one will be sent.
    if (reason === "NO_MOVE_PENDING") game.resumed = false;
    render();
  }
});

// ---------------------------------------------------------------- lobby

client.on("REGISTERED_PLAYERS", (m) => {
  state.players = m.context.players;
  renderPlayers();
  if (state.resuming) resolveResume(state.players.find((p) => p.handle === state.me?.handle));
});

/** After REREGISTER_PLAYER: the listing says whether the player is still in a game. Normally not:
 * closing the page disconnected it, and a disconnect takes a player out of its game for good: a
 * robot plays its seat and it hears nothing more of it (docs/apologies-protocol.md, "Seats,
 * robots and leaving"). */
function resolveResume(entry) {
  state.resuming = false;
  const stored = storedGame();
  if (entry && entry.game_id) {
    if (!state.game || state.game.id !== entry.game_id) {
      const known = stored && stored.id === entry.game_id ? stored : {};
      state.game = newGame({ ...known, id: entry.game_id, phase: entry.player_state === "PLAYING" ? "playing" : "joined" });
      if (state.game.phase === "playing") act(() => client.retrieveState());
    }
    // RETRIEVE_GAME_STATE never sends a pending turn again: "Optimal move" stays available instead.
    state.game.adopted = false;
    state.game.resumed = true;
    rememberGame(state.game);
    showNotice("You are back in your game: the server still had you in it.");
    render();
    return;
  }
  if (state.game && state.game.adopted) state.game = null;
  if (stored) {
    render();
    showNotice(`Welcome back, ${state.me.handle}. Leaving the page took you out of “${stored.name}”: by the protocol a disconnected player leaves its game, so a robot now plays your seat, or the game was cancelled if you advertised it or too few players were left.`);
    rememberGame(null);
  }
}

client.on("AVAILABLE_GAMES", (m) => {
  state.games = m.context.games;
  renderGames();
  render();
});

client.on("GAME_ADVERTISED", (m) => {
  const game = currentGame(m.context.game.game_id);
  if (game) game.total = m.context.game.players;
  addMessage("info", `You advertised “${m.context.game.name}”.`);
  refreshLobby();
});

client.on("GAME_INVITATION", (m) => {
  const game = m.context.game;
  state.invitations.set(game.game_id, game);
  const join = node("button", { type: "button", "data-testid": "invitation-join", onclick: () => act(() => client.join(game.game_id)) }, "Join");
  addMessage("invite", `${game.advertiser_handle} invites you to “${game.name}” (${titleCase(game.mode)}, ${game.players} seats).`, join);
  refreshLobby();
});

client.on("PLAYER_MESSAGE_RECEIVED", (m) => {
  addMessage("chat", `${m.context.sender_handle}: ${m.context.message}`);
});

for (const [event, text] of [
  ["PLAYER_IDLE", "You have been idle for a while."],
  ["PLAYER_INACTIVE", "You were inactive for too long and have been signed out."],
  ["WEBSOCKET_IDLE", "This connection has been idle for a while."],
  ["WEBSOCKET_INACTIVE", "This connection was inactive for too long."],
  ["SERVER_SHUTDOWN", "The server is shutting down."],
  ["GAME_IDLE", "Your game has been idle for a while."],
  ["GAME_INACTIVE", "Your game was inactive for too long."],
]) {
  client.on(event, () => {
    addMessage("info", text);
    if (event === "SERVER_SHUTDOWN" || event === "PLAYER_INACTIVE") showNotice(text);
  });
}

// ---------------------------------------------------------------- games

function currentGame(gameId) {
  return state.game && state.game.id === gameId ? state.game : null;
}

client.on("GAME_JOINED", (m) => inOrder(() => {
  const c = m.context;
  state.game = newGame({ id: c.game_id, name: c.name, mode: c.mode, advertiser: c.advertiser_handle, phase: "joined" });
  const known = state.games.find((g) => g.game_id === c.game_id) ?? state.invitations.get(c.game_id);
  if (known) state.game.total = known.players;
  rememberGame(state.game);
  ensureBoard();
  refreshLobby();
  render();
}));

client.on("GAME_PLAYER_CHANGE", (m) => inOrder(() => {
  const game = currentGame(m.context.game_id);
  if (game) game.seats = m.context.players;
  if (m.context.comment !== "Player joined game" || !game || game.phase !== "joined") {
    addMessage("info", m.context.comment);
  } else {
    addMessage("info", `${m.context.players.at(-1)?.handle ?? "A player"} joined “${game.name}”.`);
  }
  refreshLobby();
  render();
}));

client.on("GAME_STARTED", (m) => inOrder(() => {
  const game = currentGame(m.context.game_id);
  if (game) game.phase = "playing";
  refreshLobby();
  render();
}));

client.on("GAME_STATE_CHANGE", (m) => inOrder(() => showState(m), true));

/** A new view of the game: the move it shows is marked (who made it, which pawns moved and from
 * where). Returns whether it showed a move (false for another game's stale event). */
function showState(m) {
  let game = currentGame(m.context.game_id);
  if (!game) {
    // Reregistered before the server saw the old socket close, the player may still be in its game:
    // show it (the player listing will confirm or undo this). Any other game's events are stale
    // (Parlour sends none to a player who left, the reference server still does): ignored.
    const stored = storedGame();
    if (!state.resuming || !stored || stored.id !== m.context.game_id) return false;
    state.game = game = newGame({ ...stored, id: m.context.game_id, phase: "playing" });
    game.adopted = true;
  }
  if (game.phase === "joined") game.phase = "playing";
  const before = game.view;
  game.view = m.context;
  const changes = before ? pawnChanges(before, m.context) : [];
  const last = m.context.recent_history.at(-1);
  const entry = [...m.context.recent_history].reverse().find((e) => e.color);
  const moved = changes.length > 0 || Boolean(last && /^Turn is forfeit/.test(last.action));
  if (moved) {
    game.moves += 1;
    game.lastMove = { color: entry?.color ?? null, changes, entry: entry ?? null, seq: game.moves };
  }
  if (game.sent) setTurn(game, null); // the move we sent was played
  render(true);
  return moved;
}

client.on("GAME_PLAYER_TURN", (m) => inOrder(() => {
  const game = currentGame(m.context.game_id);
  if (!game) return;
  setTurn(game, m.context);
  game.resumed = false;
  game.card = null;
  render();
}));

// A new turn to play (or none): nothing sent for it yet, nothing picked.
function setTurn(game, turn) {
  game.turn = turn;
  game.sent = false;
  game.selected = null;
  game.choices = [];
}

client.on("GAME_COMPLETED", (m) => inOrder(() => {
  if (currentGame(m.context.game_id)) finish({ kind: "completed", winner: m.context.winner, comment: m.context.comment });
}));

client.on("GAME_CANCELLED", (m) => inOrder(() => {
  if (currentGame(m.context.game_id)) finish({ kind: "cancelled", reason: m.context.reason, comment: m.context.comment });
}));

client.on("GAME_PLAYER_QUIT", (m) => inOrder(() => {
  if (currentGame(m.context.game_id)) finish({ kind: "quit", started: state.game.phase === "playing" });
}));

function finish(outcome) {
  const game = state.game;
  game.phase = "over";
  game.outcome = outcome;
  game.turn = null;
  game.sent = false;
  game.selected = null;
  game.choices = [];
  // A lost connection keeps the record: after reconnecting, the page explains what happened.
  if (outcome.kind !== "disconnected") rememberGame(null);
  refreshLobby();
  render();
  // The game's record is stored before its end is announced: it is now among the past games.
  if (outcome.kind === "completed" || outcome.kind === "cancelled") replays.refresh();
}

function ensureBoard() {
  if (!board) {
    board = createBoard("apologies", $("board-host"), {
      onPawn(key) {
        const game = state.game;
        game.selected = game.selected === key ? null : key;
        game.choices = [];
        render();
      },
      onTarget(target) {
        if (target.moves.length === 1) execute(target.moves[0]);
        else {
          state.game.choices = target.moves;
          render();
        }
      },
    });
  }
}

function execute(move) {
  const game = state.game;
  act(() => client.execute(move.move_id));
  game.sent = true;
  game.selected = null;
  game.choices = [];
  render();
}

// ---------------------------------------------------------------- rendering

function seatHandle(game, color) {
  return game.seats.find((s) => s.player_color === color)?.handle ?? titleCase(color);
}

function banner(game) {
  const o = game.outcome;
  if (!o) return null;
  if (o.kind === "completed") {
    // The comment ("Player X won after N turns") repeats the winner: only its turn count is added.
    const mine = o.winner === state.me?.handle;
    const turns = /after (\d+) turns?/.exec(o.comment ?? "");
    const after = turns ? ` after ${turns[1]} turns` : "";
    return { cls: mine ? "win" : "done", text: mine ? `You won${after}!` : `Game over: ${o.winner} won${after}.` };
  }
  if (o.kind === "cancelled") {
    return { cls: "cancelled", text: `Game cancelled: ${CANCEL_REASONS[o.reason] ?? o.reason}${o.comment ? ` (${o.comment})` : ""}.` };
  }
  if (o.kind === "quit") {
    return { cls: "cancelled", text: o.started ? "You quit this game; a robot plays your seat." : "You left this game." };
  }
  return { cls: "cancelled", text: "Connection lost: a disconnected player leaves its game." };
}

/** `glide`: a new move was just applied; its pawns glide from where they were. */
function render(glide = false) {
  const game = state.game;
  if (game && game.phase !== "over" && replays.isOpen()) replays.close(false);
  const replaying = replays.isOpen();
  $("game").hidden = !game || replaying;
  $("app").classList.toggle("with-game", Boolean(game) || replaying);
  renderGames();
  const busy = Boolean(game && game.phase !== "over");
  if (busy !== listedBusy) {
    listedBusy = busy;
    replays.renderList(); // Replay buttons are off while a game is played
  }
  if (!game || replaying) return;
  ensureBoard();
  const mine = game.advertiser && game.advertiser === state.me?.handle;
  const live = game.phase === "joined" || game.phase === "playing";
  $("game-title").textContent = `${game.name} · ${titleCase(game.mode)}`;
  $("start-game").hidden = !(mine && game.phase === "joined");
  $("cancel-game").hidden = !(mine && live);
  $("quit-game").hidden = !(!mine && live);
  $("close-game").hidden = live;
  const b = banner(game);
  $("banner").hidden = !b;
  if (b) {
    $("banner").textContent = b.text;
    $("banner").className = `banner ${b.cls}`;
  }

  const view = game.view;
  const myTurn = Boolean(game.turn) && !game.sent && game.phase === "playing";
  const moves = myTurn ? Object.values(game.turn.moves) : [];
  const myColor = view?.player.color ?? null;
  const index = indexMoves(moves, myColor, game.card);
  const colors = view ? COLOR_ORDER.filter((c) => [view.player, ...view.opponents].some((p) => p.color === c)) : [];
  const toMove = myTurn ? myColor : game.phase === "playing" && view ? nextColor(view.recent_history, colors) : null;

  // Who is to move.
  let turnText = "";
  if (game.phase === "joined") {
    const listed = state.games.find((g) => g.game_id === game.id);
    const total = listed?.players ?? game.total;
    const taken = game.seats.length || (listed ? listed.players - listed.available : 0);
    const seats = total && taken ? ` (${taken} of ${total} seats taken)` : "";
    turnText = mine ? `Waiting for players${seats}. Start when ready: robots take the empty seats.` : `Waiting for ${game.advertiser ?? "the advertiser"} to start${seats}.`;
  } else if (game.phase === "over") turnText = "Game over";
  else if (myTurn) turnText = "Your turn";
  else if (game.sent) turnText = "Move sent…";
  else if (toMove) turnText = `Waiting for ${seatHandle(game, toMove)} (${titleCase(toMove)})`;
  else turnText = "Waiting for the first player";
  $("turn").textContent = turnText;
  $("turn").className = `turn${myTurn ? " mine" : ""}`;

  const moving = game.lastMove && game.phase === "playing" && !myTurn ? game.lastMove.color : null;
  renderSeats(game, view, colors, toMove, moving);
  renderLastMove(game);

  // The card, shown once, on the board: STANDARD shows the drawn card on our turn, else the last
  // card played; ADULT shows the hand (and the chosen card on the board).
  const lastPlayed = view ? [...view.recent_history].reverse().find((e) => e.card) : null;
  let card = null;
  let caption = "";
  if (myTurn && game.turn.drawn_card && game.mode === "STANDARD") {
    card = game.turn.drawn_card;
    caption = "your card";
  } else if (game.card) {
    card = game.card;
    caption = "chosen card";
  } else if (lastPlayed) {
    card = lastPlayed.card;
    caption = `${seatHandle(game, lastPlayed.color)} played`;
  }
  renderHand(game, view, myTurn, moves);

  if (game.selected && !index.byPawn.has(game.selected)) game.selected = null;
  const targets = game.selected ? [...index.byPawn.get(game.selected).values()] : [];
  const pawns = view ? [view.player, ...view.opponents].flatMap((p) => p.pawns) : [];
  const movable = new Map([...index.byPawn].map(([key, places]) => [key, [...places.keys()]]));
  const last = game.lastMove;
  const marked = last && game.phase === "playing" ? new Set(last.changes.map((c) => c.key)) : new Set();
  const ghosts = marked.size ? last.changes.map((c) => c.old) : [];
  board.render({ pawns, movable, selected: game.selected, targets, card, caption, marked, ghosts, glide: glide && !REDUCED_MOTION.matches });

  // Choices: forfeits when nothing can move, or the moves sharing one pawn and destination.
  let choices = game.choices;
  if (myTurn && !index.byPawn.size && index.forfeits.length) choices = index.forfeits;
  $("choices").replaceChildren(...choices.map((move) =>
    node("button", { type: "button", class: "choice", "data-testid": "choice", "data-move-id": move.move_id, onclick: () => execute(move) }, describeMove(move))));

  let hint = "";
  if (myTurn) {
    if (choices.length && !index.byPawn.size) hint = "No pawn can move: discard a card to end your turn.";
    else if (choices.length) hint = "Several moves take that pawn there: pick one.";
    else if (game.selected) hint = "Now pick where it goes (the dashed rings), or another pawn.";
    else if (game.mode === "ADULT" && !game.card) hint = "Pick a pawn (or a card to see only its moves).";
    else hint = "Pick a pawn to move, or let the server choose the optimal move.";
    if (game.turn.drawn_card && game.mode === "STANDARD") hint = `You drew ${cardFace(game.turn.drawn_card)}: ${cardHelp(game.turn.drawn_card)}. ${hint}`;
  }
  const unsure = game.resumed && game.phase === "playing" && !game.turn && !game.sent;
  if (unsure && !hint) hint = "Your choices for a turn are not sent again after a reload: if it is your turn, use Optimal move.";
  $("hint").textContent = hint;
  $("optimal").disabled = !(myTurn || unsure);
  $("optimal").hidden = game.phase === "over";
  // On a phone the turn's controls stay on screen, whatever is scrolled into view (css: .acting).
  $("turn-actions").classList.toggle("acting", myTurn || unsure);
  document.body.classList.toggle("acting", myTurn || unsure);

  const history = view ? [...view.recent_history].reverse() : [];
  $("history").replaceChildren(...history.map((entry) =>
    node("li", { title: entry.action, "data-color": entry.color ?? "" },
      entry.color ? node("span", { class: `swatch ${entry.color.toLowerCase()}` }) : null,
      entry.color ? `${seatHandle(game, entry.color)} ${describeHistory(entry)}` : describeEnding(game, entry))));
  renderStandings(game, view);
}

/** "Game completed: winner is Yellow after 40 turns" names the player: "Game completed: hal won after 40 turns". */
function describeEnding(game, entry) {
  const won = /^Game completed: winner is (\w+)(.*)$/.exec(entry.action);
  if (won) return `Game completed: ${seatHandle(game, won[1].toUpperCase())} won${won[2]}`;
  return describeHistory(entry);
}

function renderLastMove(game) {
  const box = $("last-move");
  const last = game.lastMove;
  if (!last || !last.entry || game.phase !== "playing") {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.dataset.color = last.color ?? "";
  box.dataset.seq = String(last.seq);
  const who = seatHandle(game, last.color);
  const mine = who === state.me?.handle;
  box.replaceChildren(node("span", { class: `swatch ${(last.color ?? "none").toLowerCase()}` }),
    node("span", {}, mine ? `You ${describeHistory(last.entry)}` : `${who} ${describeHistory(last.entry)}`));
}

/** The final standings (winner first, then by pawns home and how far the others still have to
 * go) and a rematch with the same people. */
function renderStandings(game, view) {
  const box = $("standings");
  const done = game.phase === "over" && game.outcome?.kind === "completed" && view;
  box.hidden = !done;
  if (!done) return;
  const rows = standings([view.player, ...view.opponents], game.outcome.winner, (color) => seatHandle(game, color));
  $("standings-rows").replaceChildren(...rows.map((row, i) =>
    node("tr", { "data-testid": `standing-${i + 1}`, class: row.handle === state.me?.handle ? "me" : "" },
      node("td", {}, String(i + 1)),
      node("td", {}, node("span", { class: `swatch ${row.color.toLowerCase()}` }), row.handle),
      node("td", {}, `${row.home}/4`),
      node("td", {}, String(row.left)))));
  const others = game.seats.filter((seat) => seat.player_type !== "PROGRAMMATIC" && seat.handle !== state.me?.handle);
  $("rematch").textContent = others.length ? `Rematch: invite ${others.map((seat) => seat.handle).join(", ")}` : "Rematch against robots";
}

function renderSeats(game, view, colors, toMove, moving) {
  const parts = view ? new Map([view.player, ...view.opponents].map((p) => [p.color, p])) : new Map();
  const seats = game.seats.length ? game.seats : colors.map((c) => ({ handle: titleCase(c), player_color: c, player_type: "HUMAN", player_state: "PLAYING" }));
  $("seats").replaceChildren(...seats.map((seat) => {
    const color = seat.player_color;
    const part = color ? parts.get(color) : null;
    const home = part ? part.pawns.filter((p) => p.home).length : 0;
    const tags = [];
    if (seat.handle === state.me?.handle) tags.push("you");
    if (seat.player_type === "PROGRAMMATIC") tags.push("robot");
    if (seat.player_state === "QUIT") tags.push("left: robot plays");
    const classes = ["seat"];
    if (color && color === toMove) classes.push("to-move");
    if (color && color === moving) classes.push("moving");
    return node("li", { class: classes.join(" "), "data-testid": `seat-${color ?? seat.handle}` },
      node("span", { class: `swatch ${(color ?? "none").toLowerCase()}` }),
      node("span", { class: "seat-name" }, seat.handle),
      tags.length ? node("span", { class: "tags" }, tags.join(", ")) : null,
      part ? node("span", { class: "home-count", title: "pawns home" }, `${home}/4 home`) : null);
  }));
}

function renderHand(game, view, myTurn, moves) {
  const host = $("hand");
  if (game.mode === "ADULT" && view) {
    const playable = new Set(moves.filter((m) => m.actions.length).map((m) => m.card));
    host.replaceChildren(...view.player.hand.map((card) =>
      node("button", {
        type: "button", class: `playing-card${game.card === card ? " selected" : ""}`, "data-testid": "hand-card",
        "data-card": card, title: cardHelp(card), disabled: !myTurn || !playable.has(card),
        onclick: () => {
          game.card = game.card === card ? null : card;
          game.selected = null;
          game.choices = [];
          render();
        },
      }, cardFace(card))));
    host.prepend(node("span", { class: "hand-label" }, "Your hand"));
    return;
  }
  host.replaceChildren(); // STANDARD: the drawn card is on the board, its help in the hint
}

function renderGames() {
  const list = $("games");
  const inGame = state.game && state.game.phase !== "over";
  if (!state.games.length) {
    list.replaceChildren(node("li", { class: "empty" }, "No games are waiting for players. Advertise one!"));
    return;
  }
  list.replaceChildren(...state.games.map((g) => {
    const own = state.game && state.game.id === g.game_id;
    const taken = g.players - g.available;
    return node("li", { class: "game-item", "data-testid": "game-item", "data-game-id": g.game_id },
      node("div", { class: "game-name" }, g.name, g.visibility === "PRIVATE" ? node("span", { class: "badge" }, "private") : null),
      node("div", { class: "game-meta" }, `${titleCase(g.mode)} · by ${g.advertiser_handle} · ${taken}/${g.players} seats`),
      own ? node("span", { class: "badge mine" }, "your game")
        : node("button", { type: "button", "data-testid": "join-game", disabled: Boolean(inGame), onclick: () => act(() => client.join(g.game_id)) }, "Join"));
  }));
}

function renderPlayers() {
  const list = $("players");
  const chosen = new Set(handles($("chat-to").value));
  const ticked = new Set([...list.querySelectorAll("input:checked")].map((box) => box.value));
  // Connected players first, in registration order (as listed), then the disconnected.
  const players = [...state.players].sort((a, b) => (a.connection_state === "DISCONNECTED") - (b.connection_state === "DISCONNECTED"));
  list.replaceChildren(...players.map((p) => {
    const me = p.handle === state.me?.handle;
    const status = p.connection_state === "DISCONNECTED" ? "disconnected" : p.player_state.toLowerCase();
    return node("li", { "data-testid": `player-${p.handle}`, class: `player ${status}` },
      me ? node("span", { class: "tick-space" }) : node("input", { type: "checkbox", value: p.handle, title: `message ${p.handle}`, "data-testid": `chat-pick-${p.handle}`, checked: ticked.has(p.handle) || chosen.has(p.handle) }),
      node("span", { class: "player-name" }, p.handle, me ? " (you)" : ""),
      node("span", { class: `badge ${status}` }, status));
  }));
}

function renderMessages() {
  $("messages").replaceChildren(...state.messages.map((m) =>
    node("li", { class: `message msg-${m.kind}`, "data-testid": `message-${m.kind}` },
      node("time", {}, m.at.toTimeString().slice(0, 5)), " ", m.text, m.extra ? " " : null, m.extra)));
}

// ---------------------------------------------------------------- controls

$("register-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.resuming = false;
  act(() => client.register($("handle").value.trim()));
});

$("advertise-form").addEventListener("submit", (event) => {
  event.preventDefault();
  act(() => client.advertise({
    name: $("game-name").value.trim(),
    mode: $("game-mode").value,
    players: Number($("game-seats").value),
    visibility: $("game-visibility").value,
    invitedHandles: handles($("game-invites").value),
    robotLevel: $("game-robots").value,
  }));
});

$("chat-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const ticked = [...$("players").querySelectorAll("input:checked")].map((box) => box.value);
  const to = [...new Set([...handles($("chat-to").value), ...ticked])];
  if (!to.length) {
    showError("No recipients", "type handles or tick players to send a message to");
    return;
  }
  act(() => client.sendMessage($("chat-text").value, to));
  addMessage("sent", `You to ${to.join(", ")}: ${$("chat-text").value}`);
  $("chat-text").value = "";
});

$("refresh").addEventListener("click", () => act(() => { client.listPlayers(); client.listGames(); }));
$("start-game").addEventListener("click", () => act(() => client.start()));
$("quit-game").addEventListener("click", () => act(() => client.quit()));
$("cancel-game").addEventListener("click", () => act(() => client.cancel()));
$("rematch").addEventListener("click", () => {
  const game = state.game;
  if (!game) return;
  const others = game.seats.filter((seat) => seat.player_type !== "PROGRAMMATIC" && seat.handle !== state.me?.handle);
  act(() => client.advertise({
    name: game.name, mode: game.mode, players: Math.max(2, game.seats.length), visibility: "PUBLIC",
    invitedHandles: others.map((seat) => seat.handle),
  }));
});
$("close-game").addEventListener("click", () => {
  state.game = null;
  render();
});
$("optimal").addEventListener("click", () => {
  act(() => client.optimal());
  state.game.sent = true;
  state.game.selected = null;
  state.game.choices = [];
  render();
});
$("sign-out").addEventListener("click", () => act(() => client.unregister()));
$("reconnect").addEventListener("click", () => {
  $("connection").textContent = "connecting…";
  client.connect();
});

renderMessages();
client.connect();
