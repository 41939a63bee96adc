// Parlour's browser client for the Apologies protocol (apologies-event-model.rst).
// One websocket to the server that served the page; the handle and player id are kept in
// localStorage so that a reload reconnects with REREGISTER_PLAYER.
import { drawBoard, positionKey } from "/board.js";

const $ = (id) => document.getElementById(id);
const stored = { id: localStorage.getItem("parlour.player_id"), handle: localStorage.getItem("parlour.handle") };
const state = { me: null, game: null, advertiser: null, view: null, turn: null, selected: null, targets: [] };
let socket;

function send(message, context) {
  const body = { message };
  if (state.me && message !== "REGISTER_PLAYER") body.player_id = state.me.id;
  if (context) body.context = context;
  socket.send(JSON.stringify(body));
}

function showError(text) {
  const box = $("error");
  box.textContent = text;
  box.hidden = !text;
}

function item(list, text, extra) {
  const li = document.createElement("li");
  li.textContent = text;
  if (extra) li.appendChild(extra);
  list.appendChild(li);
  return li;
}

function button(label, onClick, testid) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  if (testid) b.dataset.testid = testid;
  b.addEventListener("click", onClick);
  return b;
}

function connect() {
  const url = new URLSearchParams(location.search).get("ws") || `ws://${location.host}/`;
  socket = new WebSocket(url);
  socket.addEventListener("open", () => {
    $("status").textContent = "connected";
    if (stored.id && stored.handle) {
      socket.send(JSON.stringify({ message: "REREGISTER_PLAYER", player_id: stored.id, context: { handle: stored.handle } }));
    } else {
      $("register").hidden = false;
    }
  });
  socket.addEventListener("close", () => { $("status").textContent = "disconnected"; });
  socket.addEventListener("message", (event) => handle(JSON.parse(event.data)));
}

const handlers = {
  PLAYER_REGISTERED(m) {
    state.me = { id: m.player_id, handle: m.context.handle };
    localStorage.setItem("parlour.player_id", m.player_id);
    localStorage.setItem("parlour.handle", m.context.handle);
    $("who").textContent = `You are ${m.context.handle}`;
    $("register").hidden = true;
    $("app").hidden = false;
    send("LIST_PLAYERS");
    send("LIST_AVAILABLE_GAMES");
  },
  REQUEST_FAILED(m) {
    showError(`${m.context.reason.replaceAll("_", " ").toLowerCase()}: ${m.context.comment}`);
    if (m.context.reason === "INVALID_PLAYER" && !state.me) {
      localStorage.removeItem("parlour.player_id");
      $("register").hidden = false;
    }
  },
  REGISTERED_PLAYERS(m) {
    const list = $("players");
    list.replaceChildren();
    for (const p of m.context.players) item(list, `${p.handle} (${p.player_state.toLowerCase()}, ${p.connection_state.toLowerCase()})`);
  },
  AVAILABLE_GAMES(m) {
    const list = $("games");
    list.replaceChildren();
    for (const g of m.context.games) {
      const join = g.game_id === state.game ? null : button("Join", () => send("JOIN_GAME", { game_id: g.game_id }), "join");
      item(list, `${g.name} by ${g.advertiser_handle}: ${g.mode}, ${g.players} seats, ${g.available} free `, join);
    }
  },
  GAME_INVITATION(m) {
    item($("messages"), `${m.context.game.advertiser_handle} invites you to ${m.context.game.name}`);
    send("LIST_AVAILABLE_GAMES");
  },
  GAME_ADVERTISED(m) { send("LIST_AVAILABLE_GAMES"); },
  GAME_JOINED(m) {
    state.game = m.context.game_id;
    state.advertiser = m.context.advertiser_handle;
    $("game-title").textContent = `${m.context.name} (${m.context.mode})`;
    $("banner").hidden = true;
    lobbyButtons("joined");
  },
  GAME_PLAYER_CHANGE(m) {
    item($("messages"), `${m.context.comment}: ${m.context.players.map((p) => p.handle).join(", ")}`);
  },
  GAME_STARTED() {
    $("game").hidden = false;
    lobbyButtons("playing");
    send("LIST_AVAILABLE_GAMES");
  },
  GAME_STATE_CHANGE(m) {
    state.view = m.context;
    const list = $("history");
    list.replaceChildren();
    for (const h of m.context.recent_history) item(list, h.action);
    render();
  },
  GAME_PLAYER_TURN(m) {
    state.turn = m.context;
    state.selected = null;
    state.targets = [];
    render();
  },
  GAME_COMPLETED(m) { finish(`Game over: ${m.context.comment}`); },
  GAME_CANCELLED(m) { finish(`Game cancelled (${m.context.reason.toLowerCase()}${m.context.comment ? ": " + m.context.comment : ""})`); },
  GAME_PLAYER_QUIT() { finish("You left the game."); },
  PLAYER_MESSAGE_RECEIVED(m) { item($("messages"), `${m.context.sender_handle}: ${m.context.message}`); },
  PLAYER_UNREGISTERED() { localStorage.removeItem("parlour.player_id"); },
  SERVER_SHUTDOWN() { showError("The server is shutting down."); },
  PLAYER_IDLE() { item($("messages"), "You have been idle for a while."); },
  GAME_IDLE() { item($("messages"), "The game has been idle for a while."); },
};

function handle(message) {
  const handler = handlers[message.message];
  if (message.message !== "REQUEST_FAILED") showError("");
  if (handler) handler(message);
}

function lobbyButtons(phase) {
  const mine = state.advertiser === state.me?.handle;
  $("start").hidden = !(phase === "joined" && mine);
  $("cancel").hidden = !(phase !== "idle" && mine);
  $("quit").hidden = !(phase !== "idle" && !mine);
}

function finish(text) {
  const banner = $("banner");
  banner.textContent = text;
  banner.hidden = false;
  $("game").hidden = false;
  state.game = null;
  state.turn = null;
  lobbyButtons("idle");
  render();
  send("LIST_AVAILABLE_GAMES");
}

function describe(move) {
  if (!move.actions.length) return `Forfeit: discard ${move.card.replace("CARD_", "")}`;
  const steps = [...move.actions, ...move.side_effects].map((a) => `${a.start.color}${a.start.id} to ${positionKey(a.end)}`);
  return `${move.card.replace("CARD_", "")}: ${steps.join(", ")}`;
}

function execute(move) {
  send("EXECUTE_MOVE", { move_id: move.move_id });
  state.turn = null;
  state.selected = null;
  state.targets = [];
  $("choices").replaceChildren();
  render();
}

function render() {
  const view = state.view;
  const turn = state.turn;
  const moves = turn ? Object.values(turn.moves) : [];
  const movable = new Set(moves.filter((m) => m.actions.length).map((m) => `${m.actions[0].start.color}-${m.actions[0].start.id}`));
  $("optimal").disabled = !turn;
  const last = view?.recent_history.at(-1);
  const waiting = last?.color ? `Waiting for the others (last move: ${last.color.toLowerCase()})…` : "Waiting for the others…";
  $("turn").textContent = turn ? `Your turn${turn.drawn_card ? ", card " + turn.drawn_card.replace("CARD_", "") : ""}` : (state.game ? waiting : "");
  const cards = $("cards");
  cards.replaceChildren();
  if (view && view.player.hand.length) cards.textContent = `Hand: ${view.player.hand.map((c) => c.replace("CARD_", "")).join(" ")}`;
  const choices = $("choices");
  if (!state.selected) choices.replaceChildren();
  if (turn && !movable.size) {
    choices.replaceChildren();
    for (const move of moves) choices.appendChild(button(describe(move), () => execute(move), "choice"));
  }
  if (!view) return;
  const pawns = [view.player, ...view.opponents].flatMap((p) => p.pawns);
  drawBoard($("board"), pawns, {
    movable, selected: state.selected, targets: state.targets,
    onPawn(name) {
      state.selected = name;
      const mine = moves.filter((m) => m.actions.length && `${m.actions[0].start.color}-${m.actions[0].start.id}` === name);
      const byKey = new Map();
      for (const move of mine) {
        const end = move.actions[0].end;
        const key = positionKey(end);
        if (!byKey.has(key)) byKey.set(key, { position: end, color: end.color, id: end.id, moves: [] });
        byKey.get(key).moves.push(move);
      }
      state.targets = [...byKey.values()];
      choices.replaceChildren();
      render();
    },
    onTarget(target) {
      if (target.moves.length === 1) return execute(target.moves[0]);
      choices.replaceChildren();
      for (const move of target.moves) choices.appendChild(button(describe(move), () => execute(move), "choice"));
    },
  });
}

$("register-form").addEventListener("submit", (event) => {
  event.preventDefault();
  send("REGISTER_PLAYER", { handle: $("handle").value.trim() });
});
$("advertise-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const invited = $("game-invites").value.split(",").map((h) => h.trim()).filter(Boolean);
  send("ADVERTISE_GAME", {
    name: $("game-name").value, mode: $("game-mode").value, players: Number($("game-seats").value),
    visibility: $("game-visibility").value, invited_handles: invited,
  });
});
$("chat-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const to = $("chat-to").value.split(",").map((h) => h.trim()).filter(Boolean);
  send("SEND_MESSAGE", { message: $("chat-text").value, recipient_handles: to });
  $("chat-text").value = "";
});
$("refresh").addEventListener("click", () => { send("LIST_PLAYERS"); send("LIST_AVAILABLE_GAMES"); });
$("start").addEventListener("click", () => send("START_GAME"));
$("quit").addEventListener("click", () => send("QUIT_GAME"));
$("cancel").addEventListener("click", () => send("CANCEL_GAME"));
$("optimal").addEventListener("click", () => {
  send("OPTIMAL_MOVE");
  state.turn = null;
  render();
});
connect();
