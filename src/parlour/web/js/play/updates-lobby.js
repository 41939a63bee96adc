// What the server's messages about the connection, the lobby and the social side change in the
// state. One function per message type: (state, message, fx) -> the panels that changed (model.js
// ALL and friends, plus "stats" and "leaders"); fx is actions.js (requests to send, the game to
// open, errors to show). The game's own messages are in updates-game.js.

import { inflateList } from "../async-client.js";
import { ALL, KEYS, fromReport } from "./model.js";

/** Runs `work` (returning the panels it changed) after every list update queued before it. */
function inOrder(state, work) {
  const done = (state.listsQueue ?? Promise.resolve()).then(work);
  state.listsQueue = done.catch(() => []);
  return done;
}

/** Replaces the entries of `list` named in `put` (by `key`, or adds them), drops the keys in
 * `drop`; sorted by key, as the server sends the whole lists. */
function patched(list, put, drop, key) {
  const byKey = new Map(list.map((item) => [item[key], item]));
  for (const item of put ?? []) byKey.set(item[key], item);
  for (const gone of drop ?? []) byKey.delete(gone);
  return [...byKey.values()].sort((a, b) => a[key] - b[key]);
}

/** A LobbyListDeltaRequest applied to the lists (docs/async.md "Lobby lists"); the whole lists
 * are asked for again if the sizes it announces are not what the page holds then. */
export function applyDelta(state, m, fx) {
  const changed = [];
  if (m.players?.length || m.left?.length) {
    state.players = patched(state.players, m.players, m.left, "player_id");
    changed.push("lobby", "chat");
  }
  if (m.games?.length || m.closed?.length) {
    state.open = patched(state.open, m.games, m.closed, "game_id");
    changed.push("lobby", "games", "game");
  }
  if (state.players.length !== m.player_count || state.open.length !== m.game_count) {
    fx.send("GetLobbyListsRequest", {});
  }
  return [...new Set(changed)];
}

export const LOBBY_UPDATES = {
  // The connection's own events.
  open(state, _m, fx) {
    state.retries = 0;
    if (state.session) fx.authenticate();
    return [];
  },
  close(state, _m, fx) {
    state.me = null;
    if (state.stopped || !state.session) return [];
    fx.reconnectLater();
    return [];
  },
  garbled(_state, text, fx) {
    fx.error("Unreadable message from the server", text);
    return [];
  },

  AsyncConnectedRequest(state, m, fx) {
    state.me = m.player;
    state.restoring = true;
    fx.showApp();
    // Deltas (a Parlour extension): the whole lists once, then only what changes.
    fx.send("EnterLobbyRequest", { deltas: true }, { kind: "lobby" });
    fx.send("WhatsNewPussycatRequest", {}, { kind: "all" });
    fx.send("AsyncBuddyListRequest");
    fx.send("SubscribePresenceServiceRequest", { subscribe: true });
    fx.send("AskServerStatisticsRequest", { subscribe: true });
    fx.send("SubscribeToObservableGameListRequest", { subscribe: true });
    fx.send("GetChatHistoryRequest", { game_id: 0 });
    // play.html?watch=ID (the admin page's Watch link): watch that game, once in the lobby,
    // under its own observation rules.
    const watch = Number(new URLSearchParams(globalThis.location?.search ?? "").get("watch"));
    if (Number.isSafeInteger(watch) && watch > 0) fx.send("StartObserveGameRequest", { game_id: watch });
    // play.html?replay=ID (the admin page's Replay link of a finished game): its replay, once.
    const replay = Number(new URLSearchParams(globalThis.location?.search ?? "").get("replay"));
    if (Number.isSafeInteger(replay) && replay > 0 && !state.replayAsked) {
      state.replayAsked = true;
      fx.openReplayOf(replay);
    }
    for (const g of state.games.values()) g.chatAsked = false;
    fx.loadLeaders();
    return ALL;
  },
  AsyncConnectionErrorRequest(state, m, fx) {
    const words = state.catalogue.says("connection", m.reason) ?? m.message;
    fx.stop();
    if (m.reason === "REPLACED") {
      fx.setPill("signed in elsewhere", "bad");
      fx.error("Stopped", words, m.reason);
      return [];
    }
    localStorage.removeItem(KEYS.session);
    state.session = state.session ? { name: state.session.name } : null;
    fx.showSignIn(words);
    return [];
  },

  // The lobby: the whole lists (inflated later), then deltas applied to them, in the order
  // they came (a delta must not land before the list it follows has been inflated).
  LobbyPlayerListRequest(state, m, fx) {
    return inOrder(state, async () => {
      try {
        state.players = await inflateList(m.player_list);
      } catch (error) {
        fx.error("Unreadable player list", error.message);
      }
      // The lobby chat names its senders from the players here.
      return ["lobby", "chat"];
    });
  },
  LobbyGameListRequest(state, m, fx) {
    return inOrder(state, async () => {
      try {
        state.open = await inflateList(m.game_list);
        state.openKnown = true;
      } catch (error) {
        fx.error("Unreadable game list", error.message);
      }
      // Whether a game waiting for players is an invitation is read from the open games.
      return ["lobby", "games", "game"];
    });
  },
  LobbyListDeltaRequest(state, m, fx) {
    return inOrder(state, () => applyDelta(state, m, fx));
  },
  LobbyJoinDeniedRequest(state, m, fx) {
    fx.error("Cannot join", `${state.catalogue.says("join", m.cause) ?? m.cause}.`, m.cause);
    return [];
  },
  LobbyStartGameDeniedRequest(state, m, fx) {
    fx.error("Cannot start", `${state.catalogue.says("start", m.cause) ?? m.cause}.`, m.cause);
    return [];
  },

  // Buddies and presence.
  AsyncBuddyListContentRequest(state, m, fx) {
    state.buddies = new Map((m.buddies ?? []).map((b) => [b.player_id, { ...b }]));
    // The server pushes presence changes of the players registered here (S15).
    fx.send("RegisterPresenceRequest", { player_ids: [...state.buddies.keys()] });
    return ["lobby", "chat"]; // buddies name chat lines too
  },
  AsyncBuddyAddedRequest(_state, _m, fx) {
    fx.send("AsyncBuddyListRequest");
    return [];
  },
  AsyncBuddyRemovedRequest(_state, _m, fx) {
    fx.send("AsyncBuddyListRequest");
    return [];
  },
  AsyncBuddyPresencePartialUpdateRequest(state, m) {
    for (const update of m.updates ?? []) {
      const buddy = state.buddies.get(update.player_id);
      if (buddy) buddy.presence = update.presence;
    }
    return ["lobby"];
  },

  ServerStatisticsRequest(state, m) {
    state.stats = m;
    return ["stats"];
  },

  // Chat: the lobby's (game_id 0) and each game's.
  ClientChatRequest(state, m) {
    if (m.game_id) {
      const g = state.games.get(m.game_id);
      if (!g) return [];
      g.chat.push(m);
      return g.id === state.current ? ["chat"] : [];
    }
    // The welcome line comes each time the lobby is entered again (after a game starts): once is enough.
    if (m.sender === 0 && !m.recipient_ids?.length && state.lobbyChat.some((line) => line.sender === 0 && line.text === m.text)) return [];
    state.lobbyChat.push(m);
    return ["chat"];
  },
  ClientChatHistoryRequest(state, m) {
    const lines = m.messages ?? [];
    if (m.game_id) {
      const g = state.games.get(m.game_id);
      if (!g) return [];
      g.chat = [...lines, ...g.chat.filter((line) => !lines.some((h) => h.text === line.text && h.sender === line.sender))];
    } else {
      const server = state.lobbyChat.filter((line) => line.sender === 0);
      state.lobbyChat = [...lines, ...server];
    }
    return ["chat"];
  },
  ClientChatBlockedRequest(_state, m, fx) {
    fx.error("Not sent", m.muted ? "you are muted for a while" : "the message was blocked by the filter");
    return [];
  },

  // Watching.
  ObservableGameListRequest(state, m) {
    state.watchable = m.games ?? [];
    return ["watch"];
  },
  GameObservedRequest(state, m, fx) {
    if (m.status !== "OK") {
      fx.error("Cannot watch", `${state.catalogue.says("observe", m.status) ?? m.status}.`, m.status);
      return [];
    }
    if (!m.observing) return [];
    const g = fromReport(state, m.status_report);
    g.observing = true;
    g.confirmed = true; // a spectator has nothing to confirm
    return fx.select(g.id);
  },
};

// Replies that need nothing done: acknowledgements of what the page asked for, and pings.
for (const quiet of ["LobbyEnteredRequest", "LobbyExitedRequest", "SubscribedToObservableGameListRequest", "PingRequest", "ClientDataRequest"]) {
  LOBBY_UPDATES[quiet] = () => [];
}
