// What the page does besides changing its state: requests to the server, the game to open, the
// fetches (leaderboard, replay), the connection's life. The updates call these (as `fx`) and say
// which panels changed; the controls call them too and then draw the panels they name. Those that
// change the state return the panels they changed, as an update does.

import { ALL, KEYS, currentGame, game } from "./model.js";
import { showError, showNotice } from "./notices.js";
import { setPill, showApp, showSignIn } from "./views/session.js";

const $ = (id) => document.getElementById(id);

/** `draw(panels)` draws the views of those panels (play.js). */
export function createActions(client, state, draw) {
  let retryTimer = null;
  let focus = null; // the element to focus once the panels are drawn

  const fx = {
    /** Draw `panels`, then move the focus where an action asked it to go. */
    draw(panels) {
      draw(panels);
      if (focus) {
        const target = $(focus);
        focus = null;
        target?.focus({ preventScroll: false });
      }
    },

    send(type, fields = {}, purpose = null) {
      try {
        const id = client.send(type, fields);
        if (purpose) state.pending.set(id, purpose);
        return id;
      } catch (error) {
        showError("Not sent", `${error.message}; it will reconnect by itself`);
        return null;
      }
    },
    refresh(id) {
      fx.send("WhatsNewPussycatRequest", { game_id: id }, { kind: "refresh", game: id });
    },
    error: showError,
    notice: showNotice,
    setPill,

    /** Open game `id` (null: none); `announce` moves the focus to its title. */
    select(id, announce = true) {
      state.current = id;
      if (id === null) localStorage.removeItem(KEYS.current);
      else localStorage.setItem(KEYS.current, String(id));
      const g = id === null ? null : state.games.get(id);
      if (state.replay && state.replay.id !== id) state.replay = null;
      if (client.connected && state.me && !g?.observing) fx.send("SwitchedToGameRequest", id === null ? {} : { game_id: id });
      if (g && !g.chatAsked && client.connected) {
        g.chatAsked = true;
        fx.send("GetChatHistoryRequest", { game_id: id });
      }
      if (announce && id !== null) focus = "game-title";
      return ALL;
    },
    forget(id) {
      state.games.delete(id);
      if (state.current === id) return fx.select(null, false);
      return ALL;
    },
    commit(g, action) {
      if (!action || g.sent) return [];
      const id = fx.send("CommitActionRequest", { game_id: g.id, turn_index: g.turnIndex, action }, { kind: "commit", game: g.id });
      if (!id) return [];
      g.sent = true;
      return ["game"];
    },
    answer(g, accept) {
      fx.send("AnswerInvitationRequest", { game_id: g.id, accept });
      return accept ? fx.select(g.id) : [];
    },

    /** Fetch the leaderboard of state.leaders.rules, and draw it when it is still the one asked for. */
    async loadLeaders() {
      const rules = state.leaders.rules;
      if (!rules) return;
      let answer;
      try {
        const reply = await fetch(new URL(`api/leaderboard?game_type=${rules}&limit=20`, window.location.href).href);
        answer = await reply.json();
      } catch {
        return;
      }
      if (state.leaders.rules !== rules) return;
      state.leaders.rows = answer.players ?? [];
      state.leaders.shown = rules;
      fx.draw(["leaders"]);
    },

    /** The replay of game `id` from the server (null, with the reason shown, when refused). */
    async fetchReplay(id) {
      const query = `game_id=${id}&name=${encodeURIComponent(state.session?.name ?? "")}`;
      let reply;
      let body = null;
      try {
        reply = await fetch(new URL(`api/async/replay?${query}`, window.location.href).href, { headers: { Authorization: `Bearer ${state.session?.token ?? ""}` } });
        body = await reply.json();
      } catch {
        showError("No replay", "the server cannot be reached");
        return null;
      }
      if (!reply.ok) {
        showError("No replay", body?.error ?? `the server answered ${reply.status}`);
        return null;
      }
      return body;
    },
    async openReplay(g) {
      const body = await fx.fetchReplay(g.id);
      if (!body) return;
      state.replay = { id: g.id, data: body, step: 0 };
      focus = "replay-next";
      fx.draw(["game"]);
    },
    /** play.html?replay=ID (the admin page's Replay link): a finished game this player may not
     * have in its list, opened as one (watched: no seat of its own) with its replay. */
    async openReplayOf(id) {
      const body = await fx.fetchReplay(id);
      if (!body) return;
      const known = state.games.has(id);
      const g = game(state, id);
      if (!known) {
        g.config = { rules: body.rules, max_players: body.players.length };
        g.status = body.status;
        g.players = body.players.map((p) => ({ local_id: p.local_id, name: p.name, kind: p.robot ? "ROBOT" : "HUMAN" }));
        g.observing = true;
      }
      fx.select(id);
      state.replay = { id, data: body, step: 0 };
      focus = "replay-next";
      fx.draw(ALL);
    },
    replayStep(step) {
      const r = state.replay;
      if (!r) return [];
      r.step = Math.max(0, Math.min(r.data.moves.length, step));
      return ["game"];
    },

    // The connection.
    start(session) {
      state.session = session;
      state.stopped = false;
      localStorage.setItem(KEYS.session, JSON.stringify(session));
      setPill("connecting…");
      if (client.connected) fx.authenticate();
      else client.connect();
    },
    authenticate() {
      fx.send("AsyncAuthRequest", { name: state.session.name, sessionToken: state.session.token });
    },
    reconnectLater() {
      setPill("disconnected: reconnecting…", "bad");
      clearTimeout(retryTimer);
      const wait = Math.min(10_000, 500 * 2 ** state.retries++);
      retryTimer = setTimeout(() => client.connect(), wait);
    },
    /** Close the connection for good (no reconnecting). */
    stop() {
      state.stopped = true;
      client.close();
    },
    showApp: () => showApp(state),
    showSignIn: (message = "") => showSignIn(state, message),
    signOut() {
      if (client.connected) fx.send("AsyncDisconnectRequest");
      fx.stop();
      localStorage.removeItem(KEYS.session);
      localStorage.removeItem(KEYS.current);
      state.session = null;
      state.me = null;
      state.games.clear();
      state.queues.clear(); // signing out ends every queue (the server's side too)
      state.quickJoins.clear();
      state.current = null;
      fx.showSignIn();
      return ["game"];
    },

    current: () => currentGame(state),
  };
  return fx;
}
