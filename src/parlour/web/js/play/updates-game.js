// What the server's messages about games change in the state: reports, invitations, turns, clocks,
// seats, outcomes and refusals. One function per message type: (state, message, fx) -> the panels
// that changed (see updates-lobby.js).

import { ALL, KEYS, fromReport, game, gameName, gamePanels, myLocal, seatName, setClocks } from "./model.js";

/** The game `m` is about, or null when the page does not know it (the message is then ignored). */
function known(state, m) {
  return state.games.get(m.game_id) ?? null;
}

export const GAME_UPDATES = {
  // Reports and invitations.
  GameStatusReportRequest(state, m, fx) {
    for (const report of m.status_reports ?? []) fromReport(state, report);
    const purpose = state.pending.get(m.request_id);
    if (purpose?.kind === "all" && state.restoring) {
      state.restoring = false;
      const stored = Number(localStorage.getItem(KEYS.current));
      if (stored && state.games.has(stored) && state.current === null) return fx.select(stored, false);
    }
    return ALL;
  },
  GameCreatedRequest(state, m, fx) {
    const g = fromReport(state, m.status_report);
    g.invitedBy = m.invited_by ?? null;
    if (g.status === "RUNNING") {
      g.events.push("The game started.");
      // A game that starts takes its players out of the lobby: come back to keep its lists.
      fx.send("EnterLobbyRequest", { deltas: true }, { kind: "lobby" });
      // The report that announces the start reads the first mover's clock before its turn began
      // (the server shows 0 s left): ask again, now that the turn has started.
      if (g.config?.clock_seconds) fx.send("GetClocksRequest", { game_id: g.id });
      if (state.current === null || state.current === g.id) return fx.select(g.id, state.current === null);
      return gamePanels(state, g);
    }
    if (m.request_id) return fx.select(g.id); // our own invitation
    return gamePanels(state, g);
  },
  LobbyGameCreatedRequest(state, m, fx) {
    const g = game(state, m.game_id);
    g.config = m.configuration;
    g.status = "NOT_STARTED";
    g.invitedBy = null;
    g.players = [{ local_id: 1, player_id: state.me.player_id, name: state.me.name, kind: "HUMAN", presence: "ONLINE" }];
    return fx.select(g.id);
  },
  LobbyNewPlayerRequest(state, m, fx) {
    const g = game(state, m.game_id);
    g.invitedBy = null;
    if (!g.players.some((p) => p.local_id === m.local_id)) {
      g.players.push({ local_id: m.local_id, player_id: m.player.player_id, name: m.player.name, kind: "HUMAN", presence: m.player.presence });
    }
    if (m.request_id && m.player.player_id === state.me?.player_id) {
      fx.refresh(g.id);
      return fx.select(g.id);
    }
    return gamePanels(state, g);
  },
  LobbyPlayerLeftGameRequest(state, m, fx) {
    const g = known(state, m);
    if (!g) return [];
    if (m.player_id === state.me?.player_id) {
      fx.notice(m.aborted ? "You cancelled the game." : "You left the game.");
      return fx.forget(g.id);
    }
    if (m.aborted) {
      g.status = "ABORTED";
      g.events.push("Its creator cancelled the game.");
    } else {
      g.players = g.players.filter((p) => p.player_id !== m.player_id).map((p, i) => ({ ...p, local_id: i + 1 }));
    }
    return gamePanels(state, g);
  },
  InvitationAnsweredRequest(state, m, fx) {
    const g = known(state, m);
    if (!g) return [];
    g.answered = m.accept;
    if (!m.accept) {
      fx.notice("You declined the invitation.");
      return fx.forget(g.id);
    }
    return gamePanels(state, g);
  },
  GameAbortedRequest(state, m) {
    const g = known(state, m);
    if (!g) return [];
    if (g.status === "NOT_STARTED") {
      g.status = "ABORTED";
      g.events.push(g.invitedBy === state.me?.player_id ? "The invitation was declined." : "The invitation was cancelled.");
    } else {
      g.status = "ABORTING";
      g.events.push("The game was aborted: nobody is left to play it.");
    }
    return gamePanels(state, g);
  },

  // Turns.
  ActionRequiredRequest(state, m, fx) {
    const g = game(state, m.game_id);
    if (!g.config) fx.refresh(g.id);
    try {
      g.view = JSON.parse(m.state);
    } catch {
      fx.error("Unreadable game state", `game ${m.game_id}`);
    }
    g.status = "RUNNING";
    g.turn = m.player_id;
    g.turnIndex = m.turn_index;
    g.legal = m.legal_actions ?? [];
    g.legalIndex = m.turn_index;
    g.sent = false;
    for (const clock of g.clocks.values()) clock.armed = false;
    setClocks(g, [m.player_clock]);
    return gamePanels(state, g);
  },
  ActionCommitedRequest(state, m, fx) {
    const g = known(state, m);
    if (!g) return [];
    g.turnIndex = m.turn_index;
    g.legal = [];
    g.legalIndex = null;
    g.sent = false;
    fx.refresh(g.id); // the committer gets no state update: its own view comes with the report
    return gamePanels(state, g);
  },
  GameStateUpdatedRequest(state, m, fx) {
    const g = game(state, m.game_id);
    try {
      g.view = JSON.parse(m.state);
    } catch {
      return [];
    }
    g.turnIndex = m.turn_index;
    g.turn = g.view.turn ?? null;
    if (g.legalIndex !== m.turn_index) {
      g.legal = [];
      g.legalIndex = null;
    }
    if (g.config?.clock_seconds) fx.send("GetClocksRequest", { game_id: g.id });
    return gamePanels(state, g);
  },

  // Clocks.
  ClocksStatusRequest(state, m) {
    const g = known(state, m);
    if (!g) return [];
    setClocks(g, m.clocks);
    return ["clocks"];
  },
  ClockResumedRequest(state, m) {
    const g = known(state, m);
    if (!g) return [];
    g.paused = false;
    setClocks(g, m.clocks);
    return gamePanels(state, g);
  },
  ClockPausedRequest(state, m) {
    const g = known(state, m);
    if (!g) return [];
    g.paused = true;
    for (const local of m.player_ids ?? []) {
      const clock = g.clocks.get(local);
      if (clock) clock.paused = true;
    }
    return gamePanels(state, g);
  },
  PlayerIdleProgressRequest(state, m, fx) {
    const g = known(state, m);
    if (!g) return [];
    const ids = m.player_ids ?? [];
    const mine = ids.includes(myLocal(state, g));
    if (mine && m.progress < 100) fx.notice(`${gameName(state, g)} #${g.id}: it is your turn (${m.progress}% of the idle time is gone).`);
    if (m.progress !== 100) return [];
    g.events.push(`${ids.map((l) => seatName(g, l)).join(", ")} took too long: a robot played that turn.`);
    return gamePanels(state, g);
  },

  // Seats.
  GameForfeitedRequest(state, m) {
    const g = known(state, m);
    if (!g) return [];
    const seat = g.players.find((p) => p.local_id === m.player_id);
    if (seat) seat.state = "FORFEITED";
    g.events.push(`${seatName(g, m.player_id)} forfeited.`);
    return gamePanels(state, g);
  },
  PlayerReplacedRequest(state, m) {
    const g = known(state, m);
    if (!g) return [];
    const seat = g.players.find((p) => p.local_id === m.player_id);
    if (seat) seat.state = m.reason;
    g.events.push(`${seatName(g, m.player_id)} ${m.reason === "TIMED_OUT" ? "ran out of time" : "forfeited"}: a robot plays that seat now.`);
    return gamePanels(state, g);
  },
  PlayerPresenceUpdateRequest(state, m) {
    const g = known(state, m);
    if (!g) return [];
    for (const update of m.updates ?? []) {
      const seat = g.players.find((p) => p.player_id === update.player_id);
      if (seat) seat.presence = update.presence;
    }
    return gamePanels(state, g);
  },

  // The end.
  GameOutcomeRequest(state, m, fx) {
    const g = game(state, m.game_id);
    g.status = "OUTCOME";
    g.outcome = m.outcome;
    g.isRanked = m.is_ranked;
    g.turn = null;
    g.legal = [];
    g.events.push("The game is over.");
    const type = g.config?.game_type ?? g.config?.rules;
    for (const entry of m.outcome ?? []) {
      const seat = g.players.find((p) => p.local_id === entry.player_id);
      if (seat?.player_id && typeof entry.shown?.change === "number") state.lastChange.set(`${type}:${seat.player_id}`, entry.shown.change);
    }
    // The leaderboard turns to this game's, to show the change it made.
    if (state.catalogue.game(g.config?.rules)) state.leaders.rules = g.config.rules;
    fx.loadLeaders();
    return [...gamePanels(state, g), "leaders"];
  },

  ErrorRequest(state, m, fx) {
    const purpose = state.pending.get(m.request_id);
    state.pending.delete(m.request_id);
    if (m.code === "PLAYER_ALREADY_IN_LOBBY") return []; // coming back to the lobby we are in
    if (m.code === "ALREADY_QUEUED" && purpose?.kind === "requeue") return []; // quick play kept it
    if (purpose?.kind === "commit") {
      const g = state.games.get(purpose.game);
      if (g) {
        g.sent = false;
        fx.refresh(g.id);
      }
    }
    fx.error(state.catalogue.says("errors", m.code) ?? m.code, m.message, m.code);
    // Nothing is drawn yet: the board would offer the refused turn's actions again; the report
    // the refresh brings draws the game as it now is.
    return [];
  },
};
