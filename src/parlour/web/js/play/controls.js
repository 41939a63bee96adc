// The page's buttons and forms outside the lists: the open game's (forfeit, confirm, rematch,
// replay, close), the two chats, the leaderboard's game, signing out. Each does its action and
// draws the panels the action says it changed.

import { node } from "../dom.js";
import { closable } from "./model.js";

const $ = (id) => document.getElementById(id);

/** Returns showGames(), which offers the catalogue's games to the leaderboard once it has come. */
export function setupControls(state, fx) {
  const on = (id, listener) => $(id).addEventListener("click", listener);

  on("forfeit", () => {
    const g = fx.current();
    if (!g) return;
    if (g.status === "NOT_STARTED") {
      fx.send("LobbyLeaveGameRequest", { game_id: g.id });
      return;
    }
    $("forfeit-confirm").hidden = false;
    $("forfeit-confirm").focus();
  });
  on("forfeit-confirm", () => {
    $("forfeit-confirm").hidden = true;
    if (state.current !== null) fx.send("GameForfeitRequest", { game_id: state.current });
  });
  on("confirm-outcome", () => {
    const g = fx.current();
    if (!g) return;
    fx.send("GameOutcomeConfirmationRequest", { game_id: g.id });
    g.confirmed = true;
    fx.draw(["games", "game"]);
  });
  on("rematch", () => {
    const g = fx.current();
    if (!g?.config) return;
    // The same table again: the same people (invited anew) and robots, the same settings.
    const friends = g.players.filter((p) => p.player_id !== state.me?.player_id).map((p) => (p.kind === "ROBOT" || !p.player_id ? 0 : p.player_id));
    const { password: _password, private: _private, ...config } = g.config;
    fx.send("EngageGameWithFriendsRequest", { friend_ids: friends, configuration: { ...config, min_players: friends.length + 1, max_players: friends.length + 1 } });
  });
  on("close-game", () => {
    const g = fx.current();
    if (g?.observing) {
      if (g.status === "RUNNING") fx.send("StopObserveGameRequest", { game_id: g.id });
      fx.draw(fx.forget(g.id));
      return;
    }
    fx.draw(g && closable(g) ? fx.forget(g.id) : fx.select(null, false));
  });

  // Replays.
  on("replay", () => {
    const g = fx.current();
    if (g) fx.openReplay(g);
  });
  on("replay-first", () => fx.draw(fx.replayStep(0)));
  on("replay-prev", () => fx.draw(fx.replayStep((state.replay?.step ?? 0) - 1)));
  on("replay-next", () => fx.draw(fx.replayStep((state.replay?.step ?? 0) + 1)));
  on("replay-last", () => fx.draw(fx.replayStep(Infinity)));
  on("replay-close", () => {
    state.replay = null;
    fx.draw(["game"]);
  });

  const leaders = $("leaders-game");
  leaders.addEventListener("change", () => {
    state.leaders.rules = leaders.value;
    fx.loadLeaders();
  });

  for (const [form, input, scope] of [["lobby-chat-form", "lobby-chat-text", () => 0], ["game-chat-form", "game-chat-text", () => state.current]]) {
    $(form).addEventListener("submit", (event) => {
      event.preventDefault();
      const text = $(input).value.trim();
      const gameId = scope();
      if (!text || gameId === null) return;
      if (fx.send("MulticastChatRequest", { game_id: gameId, text })) $(input).value = "";
    });
  }

  on("sign-out", () => fx.draw(fx.signOut()));

  /** The leaderboard's game, one of the server's games: the first until one is chosen. */
  return function showGames() {
    leaders.replaceChildren(...state.catalogue.games.map((g) => node("option", { value: g.rules }, g.name)));
    state.leaders.rules ??= state.catalogue.games[0]?.rules ?? null;
  };
}
