// Parlour's accounts page (play.html): sign up and sign in, the lobby (players, open games,
// creating games and invitations), every game of the player, and the boards of the games the
// server computes (rules "fish", "tsuro", "apologies"). The protocol is docs/async-protocol.md;
// its client side is async-client.js, the boards are in boards/ (server-rules interface).

import { AsyncClient, asyncUrl, createAccount, inflateList, signIn } from "./async-client.js";
import { createRulesBoard, rulesBoardClass } from "./boards/index.js";
import { node } from "./dom.js";

const $ = (id) => document.getElementById(id);

const KEYS = { session: "parlour.play.session", current: "parlour.play.current" };
const GAME_NAMES = { fish: "Fish", tsuro: "Tsuro", apologies: "Apologies" };
const SEAT_RANGE = { fish: [2, 4], tsuro: [3, 5], apologies: [2, 4] };
const CLOCKS = { none: [0, 0], blitz: [300, 5], day: [86400, 0] };

const ERROR_WORDS = {
  BAD_REQUEST: "The server refused this",
  INDEX_CONFLICT: "That turn was already played",
  INTERNAL_ERROR: "Server error",
  NOT_YOUR_TURN: "It is not your turn",
  RATE_LIMITED: "Too many requests",
  TOO_LARGE: "Too large",
  TOO_MANY_OFFERS: "Too many games",
  UNAUTHENTICATED: "Not signed in",
  UNKNOWN_GAME: "No such game",
  UNKNOWN_PLAYER: "Unknown player",
  YOU_FORFEITED: "You forfeited this game",
  YOU_LEFT: "You left this game",
  YOU_RAN_OUT_OF_TIME: "You ran out of time in this game",
};
const JOIN_DENIED = {
  ALREADY_JOINED: "you are in it already",
  ALREADY_STARTED: "it has started",
  GAME_FULL: "it is full",
  TOO_MANY_GAMES: "you are in too many games",
  UNKNOWN_GAME: "it is no longer open",
  WRONG_PASSWORD: "the password is wrong",
};
const START_DENIED = {
  ALREADY_STARTED: "it has started already",
  NOT_CREATOR: "only its creator can start it",
  NOT_ENOUGH_PLAYERS: "not enough players have joined yet",
  UNKNOWN_GAME: "it is no longer open",
};
const CONNECTION_ERRORS = {
  BAD_CREDENTIALS: "Your session is no longer valid: sign in again.",
  EXPIRED_TOKEN: "Your session has expired: sign in again.",
  RATE_LIMITED: "Too many failed sign-ins: wait a little and sign in again.",
  REPLACED: "You signed in on another page or device: this page stopped. Reload it to play here.",
};
const SEAT_STATES = { FORFEITED: "forfeited: a robot plays", TIMED_OUT: "out of time: a robot plays", LEFT: "left" };

const client = new AsyncClient(asyncUrl());
const state = {
  session: readSession(),
  me: null,
  players: [], // the lobby's players (SmallPlayer)
  open: [], // the lobby's open games (ObservableGame)
  openKnown: false,
  games: new Map(),
  current: null,
  restoring: false,
  stopped: false,
  retries: 0,
  pending: new Map(), // request_id -> what it was for
  buddies: new Map(), // player_id -> SmallPlayer (presence kept up to date by the server's pushes)
  lobbyChat: [], // {sender, text, code}
  stats: null,
  watchable: [], // ObservableGame
  lastChange: new Map(), // "game_type:player_id" -> rating change of the last game seen
  replay: null, // {id, data, step}
};
let board = null; // {id, rules, board}
let retryTimer = null;

// ---------------------------------------------------------------- small helpers

function readSession() {
  try {
    const found = JSON.parse(localStorage.getItem(KEYS.session) ?? "null");
    return found && typeof found.token === "string" && typeof found.name === "string" ? found : null;
  } catch {
    return null;
  }
}

function send(type, fields = {}, purpose = null) {
  try {
    const id = client.send(type, fields);
    if (purpose) state.pending.set(id, purpose);
    return id;
  } catch (error) {
    showError("Not sent", `${error.message}; it will reconnect by itself`);
    return null;
  }
}

function showError(title, comment = "", code = "") {
  const box = $("errors");
  const item = node("div", { class: "error", "data-testid": "error", "data-code": code },
    node("span", {}, node("strong", {}, title), comment ? `: ${comment}` : ""),
    node("button", { type: "button", class: "dismiss", "aria-label": "Dismiss", title: "Dismiss", "data-testid": "dismiss-error", onclick: () => item.remove() }, "×"));
  box.prepend(item);
  while (box.children.length > 4) box.lastChild.remove();
}

function showNotice(text) {
  const box = $("notice");
  box.replaceChildren(node("span", {}, text),
    node("button", { type: "button", class: "dismiss", "aria-label": "Dismiss", title: "Dismiss", onclick: () => { box.hidden = true; } }, "×"));
  box.hidden = false;
}

function gameName(g) {
  const rules = g.config?.rules ?? g.view?.game;
  return GAME_NAMES[rules] ?? g.config?.game_type ?? "Game";
}

function myLocal(g) {
  return g.players?.find((p) => p.player_id === state.me?.player_id)?.local_id ?? null;
}

function seatName(g, local) {
  const seat = g.players?.find((p) => p.local_id === local);
  return seat ? seat.name : `Seat ${local}`;
}

function clockText(config) {
  if (!config || !config.clock_seconds) return "no clock";
  const base = config.clock_seconds >= 86400 ? `${config.clock_seconds / 86400} day` : `${Math.round(config.clock_seconds / 60)} min`;
  return config.clock_increment_seconds ? `${base} + ${config.clock_increment_seconds} s a move` : base;
}

function formatClock(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function isInvitation(g) {
  if (g.status !== "NOT_STARTED") return false;
  if (g.invitedBy !== undefined && g.invitedBy !== null) return true;
  if (g.invitedBy === null) return false;
  return state.openKnown && !state.open.some((o) => o.game_id === g.id);
}

/** A small padlock (an emoji may be missing from the fonts at hand). */
function lockIcon() {
  const icon = node("span", { class: "lock-icon", "aria-hidden": "true" });
  icon.innerHTML = '<svg viewBox="0 0 16 16" width="12" height="12"><rect x="3" y="7" width="10" height="8" rx="1.5" fill="currentColor"/>'
    + '<path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>';
  return icon;
}

function describeAction(g, action) {
  let m = /^place (\d+,\d+)$/.exec(action);
  if (m) return `placed a penguin on ${m[1]}`;
  m = /^move (\d+,\d+) (\d+,\d+)$/.exec(action);
  if (m) return `moved a penguin ${m[1]} → ${m[2]}`;
  m = /^tile (\d+) rotation (\d+) at (\d+,\d+)(?: port ([A-H]))?$/.exec(action);
  if (m) return `placed tile ${m[1]} turned ${m[2]}° on ${m[3]}${m[4] ? `, entering at ${m[4]}` : ""}`;
  m = /^remove (\d+)$/.exec(action);
  if (m) return "left the game: taken out of play";
  m = /^forfeit (\w+)$/.exec(action);
  if (m) return `had no move and discarded ${m[1]}`;
  m = /^play (\w+): (.*)$/.exec(action);
  if (m) return `played ${m[1]}: ${m[2].replaceAll("->", " → ")}`;
  return action.replace("->", " → ");
}

function playerName(id) {
  if (id === state.me?.player_id) return state.me.name;
  return state.players.find((p) => p.player_id === id)?.name ?? state.buddies.get(id)?.name ?? `player ${id}`;
}

function chatLine(line, name) {
  const server = line.sender === 0;
  return node("li", { class: `chat-line${server ? " server" : ""}${line.recipient_ids?.length ? " private" : ""}` },
    server ? null : node("strong", {}, `${name}: `), line.text);
}

// ---------------------------------------------------------------- games

function game(id) {
  let g = state.games.get(id);
  if (!g) {
    g = {
      id, config: null, status: "NOT_STARTED", players: [], turn: null, turnIndex: 0, view: null,
      legal: [], legalIndex: null, sent: false, clocks: new Map(), outcome: null, outcomeNotSeen: null,
      confirmed: false, answered: null, invitedBy: undefined, events: [], paused: false,
      observing: false, chat: [], chatAsked: false,
    };
    state.games.set(id, g);
  }
  return g;
}

/** A StatusReport (S12): everything about one game, the view being this player's own. */
function fromReport(report) {
  const g = game(report.game_id);
  g.config = report.configuration;
  g.status = report.status;
  g.players = report.players ?? [];
  g.turn = report.turn ?? null;
  g.turnIndex = report.turn_index ?? 0;
  if (report.state) {
    try {
      g.view = JSON.parse(report.state);
    } catch {
      g.view = null;
    }
  }
  setClocks(g, report.clocks ?? []);
  if (report.outcome) g.outcome = report.outcome;
  g.outcomeNotSeen = report.outcome_not_seen ?? [];
  if (g.legalIndex !== g.turnIndex || g.turn !== myLocal(g) || g.status !== "RUNNING") {
    g.legal = [];
    g.legalIndex = null;
  }
  return g;
}

function setClocks(g, clocks) {
  const now = performance.now();
  for (const c of clocks) {
    g.clocks.set(c.player_id, { remaining: c.remaining_seconds ?? null, armed: Boolean(c.armed), paused: Boolean(c.paused), at: now });
  }
}

function remaining(g, local) {
  const c = g.clocks.get(local);
  if (!c || c.remaining === null) return null;
  const running = g.status === "RUNNING" && c.armed && !c.paused;
  return running ? c.remaining - (performance.now() - c.at) / 1000 : c.remaining;
}

function select(id, announce = true) {
  state.current = id;
  if (id === null) localStorage.removeItem(KEYS.current);
  else localStorage.setItem(KEYS.current, String(id));
  const g = id === null ? null : state.games.get(id);
  if (state.replay && state.replay.id !== id) state.replay = null;
  if (client.connected && state.me && !g?.observing) send("SwitchedToGameRequest", id === null ? {} : { game_id: id });
  if (g && !g.chatAsked && client.connected) {
    g.chatAsked = true;
    send("GetChatHistoryRequest", { game_id: id });
  }
  render();
  if (announce && id !== null) $("game-title").focus({ preventScroll: false });
}

function forget(id) {
  state.games.delete(id);
  if (state.current === id) select(null, false);
  else render();
}

function commit(g, action) {
  if (!action || g.sent) return;
  const id = send("CommitActionRequest", { game_id: g.id, turn_index: g.turnIndex, action }, { kind: "commit", game: g.id });
  if (id) {
    g.sent = true;
    render();
  }
}

function refresh(id) {
  send("WhatsNewPussycatRequest", { game_id: id }, { kind: "refresh", game: id });
}

// ---------------------------------------------------------------- connection and accounts

function setPill(text, cls = "") {
  $("connection").textContent = text;
  $("connection").className = `pill ${cls}`.trim();
}

function showSignIn(message = "") {
  $("signin").hidden = false;
  $("app").hidden = true;
  $("sign-out").hidden = true;
  $("who").textContent = "";
  setPill("not signed in");
  const error = $("signin-error");
  error.textContent = message;
  error.hidden = !message;
  if (state.session?.name && !$("account-name").value) $("account-name").value = state.session.name;
  ($("account-name").value ? $("account-password") : $("account-name")).focus();
}

function start(session) {
  state.session = session;
  state.stopped = false;
  localStorage.setItem(KEYS.session, JSON.stringify(session));
  setPill("connecting…");
  if (client.connected) authenticate();
  else client.connect();
}

function authenticate() {
  send("AsyncAuthRequest", { name: state.session.name, sessionToken: state.session.token });
}

async function account(create) {
  const name = $("account-name").value.trim();
  const password = $("account-password").value;
  const error = $("signin-error");
  error.hidden = true;
  if (!name || password.length < 8) {
    error.textContent = !name ? "Type a name." : "Passwords have 8 characters or more.";
    error.hidden = false;
    return;
  }
  for (const button of [$("signin-button"), $("signup-button")]) button.disabled = true;
  try {
    if (create) await createAccount(name, password);
    const answer = await signIn(name, password);
    $("account-password").value = "";
    start({ name: answer.name, token: answer.token, player_id: answer.player_id });
  } catch (problem) {
    error.textContent = problem.message;
    error.hidden = false;
  } finally {
    for (const button of [$("signin-button"), $("signup-button")]) button.disabled = false;
  }
}

client.on("open", () => {
  state.retries = 0;
  if (state.session) authenticate();
});

client.on("close", () => {
  state.me = null;
  if (state.stopped || !state.session) return;
  setPill("disconnected: reconnecting…", "bad");
  clearTimeout(retryTimer);
  const wait = Math.min(10_000, 500 * 2 ** state.retries++);
  retryTimer = setTimeout(() => client.connect(), wait);
});

client.on("garbled", (text) => showError("Unreadable message from the server", text));

client.on("AsyncConnectedRequest", (m) => {
  state.me = m.player;
  state.restoring = true;
  $("signin").hidden = true;
  $("app").hidden = false;
  $("sign-out").hidden = false;
  $("who").textContent = m.player.name;
  setPill("connected", "ok");
  send("EnterLobbyRequest", {}, { kind: "lobby" });
  send("WhatsNewPussycatRequest", {}, { kind: "all" });
  send("AsyncBuddyListRequest");
  send("SubscribePresenceServiceRequest", { subscribe: true });
  send("AskServerStatisticsRequest", { subscribe: true });
  send("SubscribeToObservableGameListRequest", { subscribe: true });
  send("GetChatHistoryRequest", { game_id: 0 });
  for (const g of state.games.values()) g.chatAsked = false;
  loadLeaders();
  render();
});

client.on("AsyncConnectionErrorRequest", (m) => {
  const words = CONNECTION_ERRORS[m.reason] ?? m.message;
  state.stopped = true;
  client.close();
  if (m.reason === "REPLACED") {
    setPill("signed in elsewhere", "bad");
    showError("Stopped", words, m.reason);
    return;
  }
  localStorage.removeItem(KEYS.session);
  state.session = state.session ? { name: state.session.name } : null;
  showSignIn(words);
});

// ---------------------------------------------------------------- lobby

client.on("LobbyEnteredRequest", () => {});

// ---------------------------------------------------------------- social: buddies, chat, statistics

client.on("AsyncBuddyListContentRequest", (m) => {
  state.buddies = new Map((m.buddies ?? []).map((b) => [b.player_id, { ...b }]));
  // The server pushes presence changes of the players registered here (S15).
  send("RegisterPresenceRequest", { player_ids: [...state.buddies.keys()] });
  renderLobby();
});
client.on("AsyncBuddyAddedRequest", () => send("AsyncBuddyListRequest"));
client.on("AsyncBuddyRemovedRequest", () => send("AsyncBuddyListRequest"));
client.on("AsyncBuddyPresencePartialUpdateRequest", (m) => {
  for (const update of m.updates ?? []) {
    const buddy = state.buddies.get(update.player_id);
    if (buddy) buddy.presence = update.presence;
  }
  renderLobby();
});

client.on("ServerStatisticsRequest", (m) => {
  state.stats = m;
  renderStats();
});

client.on("ClientChatRequest", (m) => {
  if (m.game_id) {
    const g = state.games.get(m.game_id);
    if (!g) return;
    g.chat.push(m);
    if (g.id === state.current) renderChat();
    return;
  }
  // The welcome line comes each time the lobby is entered again (after a game starts): once is enough.
  if (m.sender === 0 && !m.recipient_ids?.length && state.lobbyChat.some((line) => line.sender === 0 && line.text === m.text)) return;
  state.lobbyChat.push(m);
  renderChat();
});
client.on("ClientChatHistoryRequest", (m) => {
  const lines = m.messages ?? [];
  if (m.game_id) {
    const g = state.games.get(m.game_id);
    if (!g) return;
    g.chat = [...lines, ...g.chat.filter((line) => !lines.some((h) => h.text === line.text && h.sender === line.sender))];
  } else {
    const server = state.lobbyChat.filter((line) => line.sender === 0);
    state.lobbyChat = [...lines, ...server];
  }
  renderChat();
});
client.on("ClientChatBlockedRequest", (m) => showError("Not sent", m.muted ? "you are muted for a while" : "the message was blocked by the filter"));

// ---------------------------------------------------------------- watching

client.on("SubscribedToObservableGameListRequest", () => {});
client.on("ObservableGameListRequest", (m) => {
  state.watchable = m.games ?? [];
  renderWatch();
});
const OBSERVE_DENIED = {
  BUDDIES_ONLY: "only its players' buddies may watch it",
  GAME_NOT_RUNNING: "it is not being played",
  NOT_IN_LOBBY: "enter the lobby first",
  NOT_OBSERVABLE: "its players do not allow watching",
  PLAYING_IN_GAME: "you play in it",
  PRIVATE_GAME: "it is private",
  UNKNOWN_GAME: "it is over",
};
client.on("GameObservedRequest", (m) => {
  if (m.status !== "OK") {
    showError("Cannot watch", `${OBSERVE_DENIED[m.status] ?? m.status}.`, m.status);
    return;
  }
  if (!m.observing) return;
  const g = fromReport(m.status_report);
  g.observing = true;
  g.confirmed = true; // a spectator has nothing to confirm
  select(g.id);
});

// ---------------------------------------------------------------- leaderboard and replays

async function loadLeaders() {
  const rules = $("leaders-game").value;
  let answer;
  try {
    const reply = await fetch(new URL(`api/leaderboard?game_type=${rules}&limit=20`, window.location.href).href);
    answer = await reply.json();
  } catch {
    return;
  }
  if ($("leaders-game").value !== rules) return;
  const rows = answer.players ?? [];
  $("leaderboard").replaceChildren(...(rows.length ? rows.map((p, i) => {
    const change = state.lastChange.get(`${rules}:${p.player_id}`);
    return node("tr", { class: p.player_id === state.me?.player_id ? "mine" : "", "data-testid": `leader-${p.name}` },
      node("td", {}, String(i + 1)), node("td", {}, p.name), node("td", {}, p.rating.toFixed(2)), node("td", {}, String(p.games)),
      node("td", { class: change > 0 ? "up" : change < 0 ? "down" : "", "data-testid": `leader-change-${p.name}` },
        change === undefined || change === null ? "" : `${change > 0 ? "+" : ""}${change.toFixed(2)}`));
  }) : [node("tr", {}, node("td", { colSpan: 5, class: "empty" }, "No ranked games yet."))]));
}

async function openReplay(g) {
  const query = `game_id=${g.id}&name=${encodeURIComponent(state.session?.name ?? "")}`;
  let reply;
  let body = null;
  try {
    reply = await fetch(new URL(`api/async/replay?${query}`, window.location.href).href, { headers: { Authorization: `Bearer ${state.session?.token ?? ""}` } });
    body = await reply.json();
  } catch {
    showError("No replay", "the server cannot be reached");
    return;
  }
  if (!reply.ok) {
    showError("No replay", body?.error ?? `the server answered ${reply.status}`);
    return;
  }
  state.replay = { id: g.id, data: body, step: 0 };
  renderGame();
  $("replay-next").focus();
}

function replayStep(step) {
  const r = state.replay;
  if (!r) return;
  r.step = Math.max(0, Math.min(r.data.moves.length, step));
  renderGame();
}

client.on("LobbyExitedRequest", () => {});

client.on("LobbyPlayerListRequest", async (m) => {
  try {
    state.players = await inflateList(m.player_list);
  } catch (error) {
    showError("Unreadable player list", error.message);
  }
  renderLobby();
});

client.on("LobbyGameListRequest", async (m) => {
  try {
    state.open = await inflateList(m.game_list);
    state.openKnown = true;
  } catch (error) {
    showError("Unreadable game list", error.message);
  }
  render();
});

client.on("LobbyGameCreatedRequest", (m) => {
  const g = game(m.game_id);
  g.config = m.configuration;
  g.status = "NOT_STARTED";
  g.invitedBy = null;
  g.players = [{ local_id: 1, player_id: state.me.player_id, name: state.me.name, kind: "HUMAN", presence: "ONLINE" }];
  select(g.id);
});

client.on("LobbyNewPlayerRequest", (m) => {
  const g = game(m.game_id);
  g.invitedBy = null;
  if (!g.players.some((p) => p.local_id === m.local_id)) {
    g.players.push({ local_id: m.local_id, player_id: m.player.player_id, name: m.player.name, kind: "HUMAN", presence: m.player.presence });
  }
  if (m.request_id && m.player.player_id === state.me?.player_id) {
    refresh(g.id);
    select(g.id);
  } else render();
});

client.on("LobbyPlayerLeftGameRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  if (m.player_id === state.me?.player_id) {
    forget(g.id);
    showNotice(m.aborted ? "You cancelled the game." : "You left the game.");
    return;
  }
  if (m.aborted) {
    g.status = "ABORTED";
    g.events.push("Its creator cancelled the game.");
  } else {
    g.players = g.players.filter((p) => p.player_id !== m.player_id).map((p, i) => ({ ...p, local_id: i + 1 }));
  }
  render();
});

client.on("LobbyJoinDeniedRequest", (m) => showError("Cannot join", `${JOIN_DENIED[m.cause] ?? m.cause}.`, m.cause));
client.on("LobbyStartGameDeniedRequest", (m) => showError("Cannot start", `${START_DENIED[m.cause] ?? m.cause}.`, m.cause));

// ---------------------------------------------------------------- games: reports, invitations

client.on("GameStatusReportRequest", (m) => {
  for (const report of m.status_reports ?? []) fromReport(report);
  const purpose = state.pending.get(m.request_id);
  if (purpose?.kind === "all" && state.restoring) {
    state.restoring = false;
    const stored = Number(localStorage.getItem(KEYS.current));
    if (stored && state.games.has(stored) && state.current === null) {
      select(stored, false);
      return;
    }
  }
  render();
});

client.on("GameCreatedRequest", (m) => {
  const g = fromReport(m.status_report);
  g.invitedBy = m.invited_by ?? null;
  if (g.status === "RUNNING") {
    g.events.push("The game started.");
    // A game that starts takes its players out of the lobby: come back to keep its lists.
    send("EnterLobbyRequest", {}, { kind: "lobby" });
    // The report that announces the start reads the first mover's clock before its turn began
    // (the server shows 0 s left): ask again, now that the turn has started.
    if (g.config?.clock_seconds) send("GetClocksRequest", { game_id: g.id });
    if (state.current === null || state.current === g.id) select(g.id, state.current === null);
    else render();
    return;
  }
  if (m.request_id) select(g.id); // our own invitation
  else render();
});

client.on("InvitationAnsweredRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  g.answered = m.accept;
  if (!m.accept) {
    forget(g.id);
    showNotice("You declined the invitation.");
    return;
  }
  render();
});

client.on("GameAbortedRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  if (g.status === "NOT_STARTED") {
    g.status = "ABORTED";
    g.events.push(g.invitedBy === state.me?.player_id ? "The invitation was declined." : "The invitation was cancelled.");
  } else {
    g.status = "ABORTING";
    g.events.push("The game was aborted: nobody is left to play it.");
  }
  render();
});

// ---------------------------------------------------------------- games: turns

client.on("ActionRequiredRequest", (m) => {
  const g = game(m.game_id);
  if (!g.config) refresh(g.id);
  try {
    g.view = JSON.parse(m.state);
  } catch {
    showError("Unreadable game state", `game ${m.game_id}`);
  }
  g.status = "RUNNING";
  g.turn = m.player_id;
  g.turnIndex = m.turn_index;
  g.legal = m.legal_actions ?? [];
  g.legalIndex = m.turn_index;
  g.sent = false;
  for (const clock of g.clocks.values()) clock.armed = false;
  setClocks(g, [m.player_clock]);
  render();
});

client.on("ActionCommitedRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  g.turnIndex = m.turn_index;
  g.legal = [];
  g.legalIndex = null;
  g.sent = false;
  refresh(g.id); // the committer gets no state update: its own view comes with the report
  render();
});

client.on("GameStateUpdatedRequest", (m) => {
  const g = game(m.game_id);
  try {
    g.view = JSON.parse(m.state);
  } catch {
    return;
  }
  g.turnIndex = m.turn_index;
  g.turn = g.view.turn ?? null;
  if (g.legalIndex !== m.turn_index) {
    g.legal = [];
    g.legalIndex = null;
  }
  if (g.config?.clock_seconds) send("GetClocksRequest", { game_id: g.id });
  render();
});

client.on("ClocksStatusRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  setClocks(g, m.clocks);
  renderClocks();
});

client.on("ClockResumedRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  g.paused = false;
  setClocks(g, m.clocks);
  render();
});

client.on("ClockPausedRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  g.paused = true;
  for (const local of m.player_ids ?? []) {
    const clock = g.clocks.get(local);
    if (clock) clock.paused = true;
  }
  render();
});

client.on("PlayerIdleProgressRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  const ids = m.player_ids ?? [];
  const mine = ids.includes(myLocal(g));
  if (mine && m.progress < 100) showNotice(`${gameName(g)} #${g.id}: it is your turn (${m.progress}% of the idle time is gone).`);
  if (m.progress === 100) g.events.push(`${ids.map((l) => seatName(g, l)).join(", ")} took too long: a robot played that turn.`);
  render();
});

client.on("GameForfeitedRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  const seat = g.players.find((p) => p.local_id === m.player_id);
  if (seat) seat.state = "FORFEITED";
  g.events.push(`${seatName(g, m.player_id)} forfeited.`);
  render();
});

client.on("PlayerReplacedRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  const seat = g.players.find((p) => p.local_id === m.player_id);
  if (seat) seat.state = m.reason;
  g.events.push(`${seatName(g, m.player_id)} ${m.reason === "TIMED_OUT" ? "ran out of time" : "forfeited"}: a robot plays that seat now.`);
  render();
});

client.on("PlayerPresenceUpdateRequest", (m) => {
  const g = state.games.get(m.game_id);
  if (!g) return;
  for (const update of m.updates ?? []) {
    const seat = g.players.find((p) => p.player_id === update.player_id);
    if (seat) seat.presence = update.presence;
  }
  render();
});

client.on("GameOutcomeRequest", (m) => {
  const g = game(m.game_id);
  g.status = "OUTCOME";
  g.outcome = m.outcome;
  g.isRanked = m.is_ranked;
  g.turn = null;
  g.legal = [];
  g.events.push("The game is over.");
  for (const entry of m.outcome ?? []) {
    const seat = g.players.find((p) => p.local_id === entry.player_id);
    const type = g.config?.game_type ?? g.config?.rules;
    if (seat?.player_id && typeof entry.rating_change === "number") state.lastChange.set(`${type}:${seat.player_id}`, entry.rating_change);
  }
  if (g.config?.rules && GAME_NAMES[g.config.rules]) $("leaders-game").value = g.config.rules;
  loadLeaders();
  render();
});

client.on("ErrorRequest", (m) => {
  const purpose = state.pending.get(m.request_id);
  state.pending.delete(m.request_id);
  if (m.code === "PLAYER_ALREADY_IN_LOBBY") return; // coming back to the lobby we are in
  if (purpose?.kind === "commit") {
    const g = state.games.get(purpose.game);
    if (g) {
      g.sent = false;
      refresh(g.id);
    }
  }
  showError(ERROR_WORDS[m.code] ?? m.code, m.message, m.code);
});

for (const quiet of ["PingRequest", "ClientDataRequest"]) client.on(quiet, () => {});

// ---------------------------------------------------------------- rendering

function render() {
  renderMyGames();
  renderLobby();
  renderWatch();
  renderGame();
  renderChat();
}

function renderStats() {
  const s = state.stats;
  $("stats").textContent = s ? `On the server: ${s.connected_players} connected of ${s.players} players, ${s.hosted_games} games.` : "";
}

function renderChat() {
  const lobbyList = $("lobby-chat");
  lobbyList.replaceChildren(...state.lobbyChat.slice(-50).map((line) => chatLine(line, playerName(line.sender))));
  lobbyList.scrollTop = lobbyList.scrollHeight;
  const g = state.current !== null ? state.games.get(state.current) : null;
  const gameList = $("game-chat");
  gameList.replaceChildren(...(g ? g.chat.slice(-50).map((line) => chatLine(line, seatName(g, line.sender))) : []));
  gameList.scrollTop = gameList.scrollHeight;
  $("game-chat-form").hidden = Boolean(g?.observing) || g?.status === "NOT_STARTED";
}

function renderWatch() {
  const me = state.me?.player_id;
  const games = state.watchable.filter((o) => !(o.players ?? []).some((p) => p.player_id === me));
  $("watch-games").replaceChildren(...(games.length ? games.map((o) => node("li", { class: "game-item", "data-testid": `watch-item-${o.game_id}` },
    node("div", { class: "game-name" }, `${GAME_NAMES[o.configuration.rules] ?? o.configuration.game_type} #${o.game_id}`),
    node("div", { class: "game-meta" }, (o.players ?? []).map((p) => p.name).join(" vs ")),
    state.games.get(o.game_id)?.observing ? node("button", { type: "button", "data-testid": `watch-${o.game_id}`, onclick: () => select(o.game_id) }, "Show")
      : node("button", { type: "button", "data-testid": `watch-${o.game_id}`, onclick: () => send("StartObserveGameRequest", { game_id: o.game_id }) }, "Watch")))
    : [node("li", { class: "empty" }, "No games being played that you could watch.")]));
}

function news(g) {
  if (g.observing) return g.status === "RUNNING" ? { kind: "wait", text: "Watching" } : { kind: "done", text: "Finished (watched)" };
  const me = myLocal(g);
  const seat = g.players.find((p) => p.local_id === me);
  if (g.status === "NOT_STARTED") {
    if (isInvitation(g) && me !== 1 && g.answered === null) return { kind: "invite", text: "Invitation waiting" };
    if (isInvitation(g)) return { kind: "wait", text: "Waiting for answers" };
    return { kind: "wait", text: `Waiting for players (${g.players.length}/${g.config?.max_players ?? "?"})` };
  }
  if (g.status === "RUNNING") {
    if (g.turn === me && (!seat || seat.state === "ACTIVE" || seat.state === undefined)) return { kind: "turn", text: "Your turn" };
    return { kind: "wait", text: g.turn ? `${seatName(g, g.turn)} to play` : "Running" };
  }
  if (g.status === "OUTCOME") {
    const unseen = !g.confirmed && (g.outcomeNotSeen?.length ? g.outcomeNotSeen.includes(me) : true);
    return unseen ? { kind: "outcome", text: "Outcome to confirm" } : { kind: "done", text: "Finished" };
  }
  if (g.status === "ABORTING") return g.confirmed ? { kind: "done", text: "Aborted" } : { kind: "outcome", text: "Aborted: confirm" };
  if (g.status === "ABORTED") return { kind: "done", text: g.events.at(-1)?.includes("declined") ? "Declined" : "Cancelled" };
  return { kind: "done", text: "Finished" };
}

const NEWS_ORDER = { turn: 0, invite: 1, outcome: 2, wait: 3, done: 4 };

function renderMyGames() {
  const list = $("my-games");
  const games = [...state.games.values()].filter((g) => g.config || g.view);
  if (!games.length) {
    list.replaceChildren(node("li", { class: "empty" }, "No games yet: create one below, or accept an invitation."));
    return;
  }
  games.sort((a, b) => NEWS_ORDER[news(a).kind] - NEWS_ORDER[news(b).kind] || b.id - a.id);
  list.replaceChildren(...games.map((g) => {
    const what = news(g);
    const others = g.players.filter((p) => p.player_id !== state.me?.player_id).map((p) => p.name);
    const current = g.id === state.current;
    const item = node("li", { class: `my-game news-${what.kind}${current ? " current" : ""}`, "data-testid": `my-game-${g.id}`, "data-news": what.kind },
      node("button", {
        type: "button", class: "open-game", "data-testid": `open-game-${g.id}`, "aria-current": current ? "true" : null,
        onclick: () => select(g.id),
      },
      node("span", { class: "game-name" }, `${gameName(g)} #${g.id}`),
      node("span", { class: "game-meta" }, others.length ? `with ${others.join(", ")}` : "waiting for players",
        g.config?.clock_seconds ? ` · ${clockText(g.config)}` : ""),
      node("span", { class: `badge news ${what.kind}`, "data-testid": `news-${g.id}` }, what.text)));
    if (what.kind === "invite") {
      item.append(node("div", { class: "row answer" },
        node("button", { type: "button", class: "primary", "data-testid": `accept-${g.id}`, onclick: () => answer(g, true) }, "Accept"),
        node("button", { type: "button", "data-testid": `decline-${g.id}`, onclick: () => answer(g, false) }, "Decline")));
    }
    return item;
  }));
}

function answer(g, accept) {
  send("AnswerInvitationRequest", { game_id: g.id, accept });
  if (accept) select(g.id);
}

function renderLobby() {
  const me = state.me?.player_id;
  const here = state.players.filter((p) => p.player_id !== me);
  // Buddies first (those out of the lobby too, with the presence the server pushes), then the rest.
  const buddies = [...state.buddies.values()].map((b) => here.find((p) => p.player_id === b.player_id) ?? b);
  const players = [...buddies.sort((a, b) => a.name.localeCompare(b.name)), ...here.filter((p) => !state.buddies.has(p.player_id))];
  $("lobby-players").replaceChildren(...(players.length ? players.map((p) => {
    const buddy = state.buddies.has(p.player_id);
    const presence = (p.presence ?? "OFFLINE").toLowerCase();
    return node("li", { class: `player${buddy ? " buddy" : ""}`, "data-testid": `lobby-player-${p.name}`, "data-presence": p.presence ?? "OFFLINE" },
      node("span", { class: "player-name" }, buddy ? node("span", { class: "star", title: "buddy", "aria-label": "buddy" }, "★ ") : null, p.name),
      node("span", { class: `badge ${presence}`, "data-testid": `presence-${p.name}` }, p.presence === "IN_GAME" ? "in a game" : presence),
      node("button", {
        type: "button", class: "quiet", "data-testid": `buddy-${p.name}`, "aria-pressed": buddy ? "true" : "false",
        "aria-label": buddy ? `Remove ${p.name} from your buddies` : `Add ${p.name} to your buddies`,
        onclick: () => send("AsyncBuddyManagementRequest", { operation: buddy ? "REMOVE" : "ADD", player_id: p.player_id }),
      }, buddy ? "Unbuddy" : "Buddy"),
      node("button", { type: "button", class: "quiet", "data-testid": `invite-${p.name}`, "aria-label": `Invite ${p.name}`, onclick: () => addInvitee(p.name) }, "Invite"));
  }) : [node("li", { class: "empty" }, "Nobody else is in the lobby right now.")]));

  const open = state.open;
  // Typed passwords survive the list being drawn again.
  const typed = new Map([...$("open-games").querySelectorAll(".join-password")].map((input) => [input.dataset.testid, input.value]));
  $("open-games").replaceChildren(...(open.length ? open.map((o) => {
    const c = o.configuration;
    const seated = o.players ?? [];
    const mine = seated.some((p) => p.player_id === me);
    const playable = c.rules && c.rules !== "client" && GAME_NAMES[c.rules];
    const creator = seated[0]?.name ?? "?";
    const password = node("input", {
      type: "password", class: "join-password", placeholder: "password", "aria-label": `Password for game ${o.game_id}`,
      "data-testid": `join-password-${o.game_id}`, autocomplete: "off", value: typed.get(`join-password-${o.game_id}`) ?? "",
    });
    return node("li", { class: "game-item open-game-item", "data-testid": `open-game-item-${o.game_id}` },
      node("div", { class: "game-name" }, `${GAME_NAMES[c.rules] ?? c.game_type} #${o.game_id}`,
        c.private ? node("span", { class: "badge lock", title: "A password is needed to join", "data-testid": `lock-${o.game_id}` }, lockIcon(), "password") : null,
        c.ranked ? node("span", { class: "badge" }, "ranked") : null),
      node("div", { class: "game-meta" }, `by ${creator} · ${seated.length}/${c.max_players} seats · ${clockText(c)}`),
      mine ? node("button", { type: "button", "data-testid": `show-open-${o.game_id}`, onclick: () => { game(o.game_id); refresh(o.game_id); select(o.game_id); } }, "Yours: open")
        : playable ? node("form", {
          class: "row join-form",
          onsubmit: null,
        }, c.private ? password : null,
        node("button", { type: "submit", class: "primary", "data-testid": `join-${o.game_id}` }, "Join"))
          : node("span", { class: "badge" }, "another client's game"));
  }) : [node("li", { class: "empty" }, "No open games: create one!")]));
  for (const form of $("open-games").querySelectorAll(".join-form")) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const id = Number(form.closest("li").dataset.testid.replace("open-game-item-", ""));
      const password = form.querySelector("input")?.value || null;
      send("LobbyJoinGameRequest", password ? { game_id: id, password } : { game_id: id });
    });
  }
}

function addInvitee(name) {
  $("create-box").open = true;
  const box = $("create-invite");
  const names = box.value.split(/[\s,]+/).filter(Boolean);
  if (!names.some((n) => n.toLowerCase() === name.toLowerCase())) names.push(name);
  box.value = names.join(", ");
  document.querySelector("[data-testid='create-how-invite']").checked = true;
  syncCreateForm();
  box.focus();
}

function ensureBoard(g) {
  const rules = g.config?.rules ?? g.view?.game;
  if (!rulesBoardClass(rules)) return null;
  if (!board || board.id !== g.id || board.rules !== rules) {
    board = { id: g.id, rules, board: createRulesBoard(rules, $("board-host"), { onAction: (action) => commit(state.games.get(board.id), action) }) };
  }
  return board.board;
}

function renderGame() {
  const g = state.current !== null ? state.games.get(state.current) : null;
  $("no-game").hidden = Boolean(g);
  $("game-body").hidden = !g;
  $("app").classList.toggle("with-game", Boolean(g));
  if (!g) {
    if (board) {
      $("board-host").replaceChildren();
      board = null;
    }
    return;
  }
  const me = myLocal(g);
  const mySeat = g.players.find((p) => p.local_id === me);
  const rules = g.config?.rules ?? g.view?.game;
  const Board = rulesBoardClass(rules);
  const what = news(g);
  $("game").dataset.gameId = String(g.id);
  $("game").dataset.turnIndex = String(g.turnIndex);
  $("game").dataset.status = g.status;
  $("game-title").textContent = `${gameName(g)} #${g.id}`;
  const meta = [];
  if (g.config) {
    meta.push(`${g.config.max_players} seats`, clockText(g.config), g.config.ranked ? "ranked" : "not ranked");
    if (g.config.private) meta.push("password");
  }
  if (g.turnIndex) meta.push(`turn ${g.turnIndex}`);
  $("game-meta").textContent = meta.join(" · ");

  // Whose turn.
  const myTurn = g.status === "RUNNING" && g.turn === me && g.legal.length > 0 && !g.sent;
  let turn = what.text;
  if (g.status === "RUNNING") {
    if (myTurn) turn = "Your turn";
    else if (g.sent) turn = "Move sent…";
    else if (g.turn === me && mySeat?.state !== "ACTIVE" && mySeat?.state) turn = "A robot plays your seat";
    else if (g.turn === me) turn = "Your turn (loading…)";
    else if (g.turn) {
      const seat = g.players.find((p) => p.local_id === g.turn);
      turn = seat?.kind === "ROBOT" || (seat?.state && seat.state !== "ACTIVE") ? `A robot plays for ${seatName(g, g.turn)}` : `Waiting for ${seatName(g, g.turn)}`;
    }
    if (g.paused) turn += " · clock paused ⏸";
  } else if (g.status === "OUTCOME" || g.status === "OVER") turn = "Game over";
  else if (g.status === "ABORTING" || g.status === "ABORTED") turn = g.events.at(-1) ?? "Game aborted";
  $("turn").textContent = turn;
  $("turn").className = `turn${myTurn ? " mine" : ""}`;

  // Buttons.
  const live = !g.observing && g.status === "RUNNING" && mySeat?.state !== "FORFEITED" && mySeat?.state !== "TIMED_OUT";
  const waiting = g.status === "NOT_STARTED" && !g.observing;
  const forfeit = $("forfeit");
  forfeit.hidden = !(live || waiting);
  forfeit.textContent = waiting ? (me === 1 ? "Cancel game" : "Leave") : "Forfeit";
  if (!live) $("forfeit-confirm").hidden = true;

  // Seats.
  $("seats").replaceChildren(...g.players.map((p) => {
    const tags = [];
    if (p.local_id === me) tags.push("you");
    if (p.kind === "ROBOT") tags.push("robot");
    if (SEAT_STATES[p.state]) tags.push(SEAT_STATES[p.state]);
    if (p.kind === "HUMAN" && (p.presence ?? "OFFLINE") === "OFFLINE" && p.local_id !== me) tags.push("away");
    const detail = Board && g.view ? Board.seatDetail(g.view, p.local_id) : "";
    const color = Board ? Board.seatColor(p.local_id, g.view) : "#bbb";
    const clock = g.clocks.get(p.local_id);
    return node("li", {
      class: `seat${p.local_id === g.turn && g.status === "RUNNING" ? " to-move" : ""}${p.state && p.state !== "ACTIVE" ? " replaced" : ""}`,
      "data-testid": `seat-${p.local_id}`, "data-state": p.state ?? "ACTIVE",
    },
    node("span", { class: "swatch", style: `background:${color}` }),
    node("span", { class: "seat-name" }, p.name),
    tags.length ? node("span", { class: "tags" }, tags.join(", ")) : null,
    detail ? node("span", { class: "home-count", "data-testid": `seat-detail-${p.local_id}` }, detail) : null,
    clock && clock.remaining !== null ? node("span", { class: `clock${clock.paused ? " paused" : ""}`, "data-clock": p.local_id, "data-testid": `clock-${p.local_id}`, role: "timer", "aria-label": `${p.name}'s clock` }, "") : null);
  }));
  renderClocks();

  // Invitation or waiting room.
  const box = $("invitation-box");
  box.hidden = !waiting && !(g.status === "ABORTING" && !g.confirmed);
  if (waiting) {
    const parts = [];
    if (what.kind === "invite") {
      parts.push(node("p", {}, `${g.players[0]?.name ?? "Someone"} invites you to play ${gameName(g)} (${clockText(g.config)}).`),
        node("div", { class: "row" },
          node("button", { type: "button", class: "primary", "data-testid": "accept-invitation", onclick: () => answer(g, true) }, "Accept"),
          node("button", { type: "button", "data-testid": "decline-invitation", onclick: () => answer(g, false) }, "Decline")));
    } else if (isInvitation(g)) {
      parts.push(node("p", {}, `Waiting for ${g.players.filter((p) => p.kind === "HUMAN" && p.local_id !== me).map((p) => p.name).join(", ")} to accept. The game starts when everyone has.`));
    } else {
      const min = g.config?.min_players ?? 2;
      parts.push(node("p", {}, `Waiting for players: ${g.players.length} of ${g.config?.max_players ?? "?"} seats taken. It starts when full${me === 1 ? `, or when you start it (at least ${min})` : ""}.`));
      if (me === 1) {
        parts.push(node("button", {
          type: "button", class: "primary", "data-testid": "start-now", disabled: g.players.length < min,
          onclick: () => send("LobbyStartGameRequest", { game_id: g.id }),
        }, "Start now"));
      }
    }
    box.replaceChildren(...parts);
  } else if (g.status === "ABORTING" && !g.confirmed) {
    box.replaceChildren(node("p", {}, "This game was aborted."),
      g.config?.rules && g.config.rules !== "client" && !state.replay ? node("button", { type: "button", "data-testid": "replay-aborted", onclick: () => openReplay(g) }, "Replay") : null,
      node("button", { type: "button", class: "primary", "data-testid": "confirm-abort", onclick: () => {
        send("GameAbortedConfirmationRequest", { game_id: g.id });
        g.confirmed = true;
        render();
      } }, "Confirm"));
  }

  // Outcome.
  const outcome = $("outcome");
  const over = (g.status === "OUTCOME" || g.status === "OVER") && g.outcome;
  outcome.hidden = !over;
  if (over) {
    const ranked = [...g.outcome].sort((a, b) => a.rank - b.rank);
    $("outcome-rows").replaceChildren(...ranked.map((entry) => {
      const change = entry.rating_change;
      return node("tr", { class: entry.player_id === me ? "mine" : "", "data-testid": `outcome-${entry.player_id}` },
        node("td", {}, String(entry.rank)),
        node("td", {}, seatName(g, entry.player_id), entry.player_id === me ? " (you)" : ""),
        node("td", {}, String(entry.score)),
        node("td", { class: change > 0 ? "up" : change < 0 ? "down" : "" }, change === null || change === undefined ? "—" : `${change > 0 ? "+" : ""}${change.toFixed(2)}`));
    }));
    const mine = g.outcome.find((e) => e.player_id === me);
    const best = Math.min(...g.outcome.map((e) => e.rank));
    const tied = g.outcome.filter((e) => e.rank === best).length > 1;
    $("outcome-title").textContent = !mine ? "Game over"
      : mine.rank === best ? (tied ? "You won, tied for first place!" : "You won!") : `Game over: you finished #${mine.rank}`;
    const unseen = news(g).kind === "outcome";
    $("confirm-outcome").hidden = !unseen || g.observing;
    $("rematch").hidden = g.observing || !g.config;
    $("replay").hidden = Boolean(state.replay);
    $("outcome-note").textContent = unseen ? "Confirm that you saw the result: the game then leaves your list when everyone has." : "Confirmed.";
  }

  // Board: the game as it is, or a step of its replay.
  const host = $("board-host");
  const r = state.replay && state.replay.id === g.id ? state.replay : null;
  $("replay-bar").hidden = !r;
  if (r) {
    const total = r.data.moves.length;
    const move = r.step ? r.data.moves[r.step - 1] : null;
    $("replay-step").textContent = move ? `Move ${r.step} of ${total}: ${seatName(g, move.seat)} ${describeAction(g, move.action)}` : `Start (${total} moves)`;
    $("replay-bar").dataset.step = String(r.step);
    $("replay-bar").dataset.total = String(total);
    $("replay-first").disabled = $("replay-prev").disabled = r.step === 0;
    $("replay-next").disabled = $("replay-last").disabled = r.step === total;
  }
  if (r && Board) {
    const view = r.step ? r.data.moves[r.step - 1].view : r.data.initial;
    ensureBoard(g).render({ view, legal: [], me });
    host.hidden = false;
  } else if (g.view && Board) {
    const b = ensureBoard(g);
    b.render({ view: g.view, legal: myTurn ? g.legal : [], me });
    host.hidden = false;
  } else {
    host.hidden = true;
    if (board) {
      host.replaceChildren();
      board = null;
    }
  }

  // Last moves and events.
  const recent = (g.view?.recent ?? []).map((entry) => `${seatName(g, entry.id)} ${describeAction(g, entry.action)}`);
  const lines = [...g.events.slice(-4), ...recent].reverse();
  $("recent").replaceChildren(...lines.map((line) => node("li", {}, line)));
  $("recent").closest("details").hidden = !lines.length;
}

function renderClocks() {
  const g = state.current !== null ? state.games.get(state.current) : null;
  if (!g) return;
  for (const span of document.querySelectorAll("[data-clock]")) {
    const local = Number(span.dataset.clock);
    const left = remaining(g, local);
    const clock = g.clocks.get(local);
    if (left === null) continue;
    const text = `${clock?.paused ? "⏸ " : ""}${formatClock(left)}`;
    if (span.textContent !== text) span.textContent = text;
    span.classList.toggle("low", left < 30);
    span.classList.toggle("running", Boolean(clock?.armed && !clock.paused && g.status === "RUNNING"));
  }
}

setInterval(renderClocks, 250);

// ---------------------------------------------------------------- controls

$("signin-form").addEventListener("submit", (event) => {
  event.preventDefault();
  account(false);
});
$("signup-button").addEventListener("click", () => {
  if ($("signin-form").reportValidity()) account(true);
});

$("sign-out").addEventListener("click", () => {
  if (client.connected) send("AsyncDisconnectRequest");
  state.stopped = true;
  client.close();
  localStorage.removeItem(KEYS.session);
  localStorage.removeItem(KEYS.current);
  state.session = null;
  state.me = null;
  state.games.clear();
  state.current = null;
  board = null;
  $("board-host").replaceChildren();
  showSignIn();
});

function syncCreateForm() {
  const rules = $("create-rules").value;
  const [low, high] = SEAT_RANGE[rules];
  const seats = $("create-seats");
  const chosen = Number(seats.value) || low;
  seats.replaceChildren(...Array.from({ length: high - low + 1 }, (_, i) => node("option", { value: String(low + i), selected: low + i === Math.min(high, Math.max(low, chosen)) }, String(low + i))));
  const how = document.querySelector("input[name='create-how']:checked").value;
  $("create-form").classList.toggle("how-open", how === "open");
  $("create-form").classList.toggle("how-invite", how === "invite");
  $("create").textContent = how === "open" ? "Open the game" : "Send invitations";
}

$("create-rules").addEventListener("change", syncCreateForm);
for (const radio of document.querySelectorAll("input[name='create-how']")) radio.addEventListener("change", syncCreateForm);

$("create-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const rules = $("create-rules").value;
  const [low, high] = SEAT_RANGE[rules];
  const [clock, increment] = CLOCKS[$("create-clock").value];
  const config = { game_type: rules, rules, clock_seconds: clock, clock_increment_seconds: increment, ranked: $("create-ranked").checked };
  const how = document.querySelector("input[name='create-how']:checked").value;
  if (how === "open") {
    const seats = Number($("create-seats").value);
    const password = $("create-password").value;
    Object.assign(config, { min_players: low, max_players: seats });
    if (password) Object.assign(config, { private: true, password });
    send("LobbyCreateGameRequest", { configuration: config });
    return;
  }
  const names = $("create-invite").value.split(/[\s,]+/).filter(Boolean);
  const known = new Map();
  for (const p of [...state.players, ...state.buddies.values()]) known.set(p.name.toLowerCase(), p.player_id);
  for (const g of state.games.values()) for (const p of g.players) if (p.player_id) known.set(p.name.toLowerCase(), p.player_id);
  const ids = [];
  for (const name of names) {
    const id = known.get(name.toLowerCase());
    if (name.toLowerCase() === state.me?.name.toLowerCase()) return showError("Cannot invite yourself", "you take the first seat anyway");
    if (!id) return showError("Unknown player", `${name} is not in the lobby: a player must be signed in to be invited by name`);
    if (!ids.includes(id)) ids.push(id);
  }
  const robots = Number($("create-robots").value);
  const seats = 1 + ids.length + robots;
  if (!ids.length) return showError("Nobody invited", "invite at least one person: a game of robots alone is not allowed (open a game in the lobby instead)");
  if (seats < low || seats > high) return showError("Wrong number of players", `${GAME_NAMES[rules]} is played by ${low} to ${high} players; with you, this makes ${seats}`);
  Object.assign(config, { min_players: seats, max_players: seats });
  send("EngageGameWithFriendsRequest", { friend_ids: [...ids, ...Array(robots).fill(0)], configuration: config });
});

$("forfeit").addEventListener("click", () => {
  const g = state.games.get(state.current);
  if (!g) return;
  if (g.status === "NOT_STARTED") {
    send("LobbyLeaveGameRequest", { game_id: g.id });
    return;
  }
  $("forfeit-confirm").hidden = false;
  $("forfeit-confirm").focus();
});
$("forfeit-confirm").addEventListener("click", () => {
  $("forfeit-confirm").hidden = true;
  if (state.current !== null) send("GameForfeitRequest", { game_id: state.current });
});
$("confirm-outcome").addEventListener("click", () => {
  const g = state.games.get(state.current);
  if (!g) return;
  send("GameOutcomeConfirmationRequest", { game_id: g.id });
  g.confirmed = true;
  render();
});
$("rematch").addEventListener("click", () => {
  const g = state.games.get(state.current);
  if (!g?.config) return;
  // The same table again: the same people (invited anew) and robots, the same settings.
  const friends = g.players.filter((p) => p.player_id !== state.me?.player_id).map((p) => (p.kind === "ROBOT" || !p.player_id ? 0 : p.player_id));
  const { password: _password, private: _private, ...config } = g.config;
  send("EngageGameWithFriendsRequest", { friend_ids: friends, configuration: { ...config, min_players: friends.length + 1, max_players: friends.length + 1 } });
});
$("replay").addEventListener("click", () => {
  const g = state.games.get(state.current);
  if (g) openReplay(g);
});
$("replay-first").addEventListener("click", () => replayStep(0));
$("replay-prev").addEventListener("click", () => replayStep((state.replay?.step ?? 0) - 1));
$("replay-next").addEventListener("click", () => replayStep((state.replay?.step ?? 0) + 1));
$("replay-last").addEventListener("click", () => replayStep(Infinity));
$("replay-close").addEventListener("click", () => {
  state.replay = null;
  renderGame();
});
$("leaders-game").addEventListener("change", loadLeaders);
for (const [form, input, scope] of [["lobby-chat-form", "lobby-chat-text", () => 0], ["game-chat-form", "game-chat-text", () => state.current]]) {
  $(form).addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $(input).value.trim();
    const gameId = scope();
    if (!text || gameId === null) return;
    if (send("MulticastChatRequest", { game_id: gameId, text })) $(input).value = "";
  });
}

$("close-game").addEventListener("click", () => {
  const g = state.games.get(state.current);
  if (g?.observing) {
    if (g.status === "RUNNING") send("StopObserveGameRequest", { game_id: g.id });
    forget(g.id);
    return;
  }
  if (g && (g.status === "ABORTED" || g.status === "OVER" || ((g.status === "OUTCOME" || g.status === "ABORTING") && g.confirmed))) forget(g.id);
  else select(null, false);
});

// ---------------------------------------------------------------- start

syncCreateForm();
if (state.session?.token) start(state.session);
else showSignIn();
