// The page's state, as the server's messages and the player's clicks leave it (updates-*.js change
// it; the views read it), and the questions the views ask of a game. No DOM here.

export const KEYS = { session: "parlour.play.session", current: "parlour.play.current" };

export function readSession() {
  try {
    const found = JSON.parse(localStorage.getItem(KEYS.session) ?? "null");
    return found && typeof found.token === "string" && typeof found.name === "string" ? found : null;
  } catch {
    return null;
  }
}

/** Everything the page knows; one object, owned by play.js and handed to updates and views. */
export function createState(catalogue) {
  return {
    catalogue,
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
    leaders: { rules: null, rows: null, shown: null }, // rules: the game chosen (the catalogue's first); shown: the game of rows
    replay: null, // {id, data, step}
    replayAsked: false, // play.html?replay=ID was opened (once, not at every reconnection)
    queues: new Map(), // quick play: queue key -> QueueEntry as last shown, with `at` (when it came)
    quickJoins: new Map(), // quick play: queue key -> the QuickPlayJoinRequest fields that made it
  };
}

/** The game `id`, made empty when first heard of. */
export function game(state, id) {
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

export function currentGame(state) {
  return state.current !== null ? state.games.get(state.current) ?? null : null;
}

/** A StatusReport (S12): everything about one game, the view being this player's own. */
export function fromReport(state, report) {
  const g = game(state, report.game_id);
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
  if (g.legalIndex !== g.turnIndex || g.turn !== myLocal(state, g) || g.status !== "RUNNING") {
    g.legal = [];
    g.legalIndex = null;
  }
  return g;
}

export function setClocks(g, clocks) {
  const now = performance.now();
  for (const c of clocks) {
    g.clocks.set(c.player_id, { remaining: c.remaining_seconds ?? null, armed: Boolean(c.armed), paused: Boolean(c.paused), at: now });
  }
}

/** Seconds left on a seat's clock now (it runs down between the server's reports), or null. */
export function remaining(g, local) {
  const c = g.clocks.get(local);
  if (!c || c.remaining === null) return null;
  const running = g.status === "RUNNING" && c.armed && !c.paused;
  return running ? c.remaining - (performance.now() - c.at) / 1000 : c.remaining;
}

export function rulesOf(g) {
  return g.config?.rules ?? g.view?.game;
}

export function gameName(state, g) {
  return state.catalogue.name(rulesOf(g)) ?? g.config?.game_type ?? "Game";
}

export function myLocal(state, g) {
  return g.players?.find((p) => p.player_id === state.me?.player_id)?.local_id ?? null;
}

export function seatName(g, local) {
  const seat = g.players?.find((p) => p.local_id === local);
  return seat ? seat.name : `Seat ${local}`;
}

export function playerName(state, id) {
  if (id === state.me?.player_id) return state.me.name;
  return state.players.find((p) => p.player_id === id)?.name ?? state.buddies.get(id)?.name ?? `player ${id}`;
}

export function isInvitation(state, g) {
  if (g.status !== "NOT_STARTED") return false;
  if (g.invitedBy !== undefined && g.invitedBy !== null) return true;
  if (g.invitedBy === null) return false;
  return state.openKnown && !state.open.some((o) => o.game_id === g.id);
}

export const NEWS_ORDER = { turn: 0, invite: 1, outcome: 2, wait: 3, done: 4 };

/** What the player should know of a game at a glance: {kind (a NEWS_ORDER key), text}. */
export function news(state, g) {
  if (g.observing) return g.status === "RUNNING" ? { kind: "wait", text: "Watching" } : { kind: "done", text: "Finished (watched)" };
  const me = myLocal(state, g);
  const seat = g.players.find((p) => p.local_id === me);
  if (g.status === "NOT_STARTED") {
    if (isInvitation(state, g) && me !== 1 && g.answered === null) return { kind: "invite", text: "Invitation waiting" };
    if (isInvitation(state, g)) return { kind: "wait", text: "Waiting for answers" };
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

/** A game the player may leave the list of (Close forgets it rather than hiding it). */
export function closable(g) {
  return g.status === "ABORTED" || g.status === "OVER" || ((g.status === "OUTCOME" || g.status === "ABORTING") && g.confirmed);
}

/** The panels (views) an update may say it changed; ALL are those a change of game may touch. */
export const ALL = ["games", "lobby", "watch", "game", "chat"];

/** The panels showing game `g`: the list of games always, the game and its chat when it is open. */
export function gamePanels(state, g) {
  return g.id === state.current ? ["games", "game", "chat"] : ["games"];
}
