// The lobby's two lists: the players (buddies first, with their presence) and the open games.

import { node } from "../../dom.js";
import { profileLink } from "../../profile-link.js";
import { game } from "../model.js";
import { clockText } from "../words.js";

/** A small padlock (an emoji may be missing from the fonts at hand). */
function lockIcon() {
  const icon = node("span", { class: "lock-icon", "aria-hidden": "true" });
  icon.innerHTML = '<svg viewBox="0 0 16 16" width="12" height="12"><rect x="3" y="7" width="10" height="8" rx="1.5" fill="currentColor"/>'
    + '<path d="M5 7V5a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>';
  return icon;
}

/** `invite(name)` adds a player to the create form's invitations. */
export function createLobbyView(state, fx, invite) {
  const $ = (id) => document.getElementById(id);

  function renderPlayers() {
    const me = state.me?.player_id;
    const here = state.players.filter((p) => p.player_id !== me);
    // Buddies first (those out of the lobby too, with the presence the server pushes), then the rest.
    const buddies = [...state.buddies.values()].map((b) => here.find((p) => p.player_id === b.player_id) ?? b);
    const players = [...buddies.sort((a, b) => a.name.localeCompare(b.name)), ...here.filter((p) => !state.buddies.has(p.player_id))];
    $("lobby-players").replaceChildren(...(players.length ? players.map((p) => {
      const buddy = state.buddies.has(p.player_id);
      const presence = (p.presence ?? "OFFLINE").toLowerCase();
      return node("li", { class: `player${buddy ? " buddy" : ""}`, "data-testid": `lobby-player-${p.name}`, "data-presence": p.presence ?? "OFFLINE" },
        node("span", { class: "player-name" }, buddy ? node("span", { class: "star", title: "buddy", "aria-label": "buddy" }, "★ ") : null, profileLink(p.name)),
        node("span", { class: `badge ${presence}`, "data-testid": `presence-${p.name}` }, p.presence === "IN_GAME" ? "in a game" : presence),
        node("button", {
          type: "button", class: "quiet", "data-testid": `buddy-${p.name}`, "aria-pressed": buddy ? "true" : "false",
          "aria-label": buddy ? `Remove ${p.name} from your buddies` : `Add ${p.name} to your buddies`,
          onclick: () => fx.send("AsyncBuddyManagementRequest", { operation: buddy ? "REMOVE" : "ADD", player_id: p.player_id }),
        }, buddy ? "Unbuddy" : "Buddy"),
        node("button", { type: "button", class: "quiet", "data-testid": `invite-${p.name}`, "aria-label": `Invite ${p.name}`, onclick: () => invite(p.name) }, "Invite"));
    }) : [node("li", { class: "empty" }, "Nobody else is in the lobby right now.")]));
  }

  function join(event, id) {
    event.preventDefault();
    const password = event.currentTarget.querySelector("input")?.value || null;
    fx.send("LobbyJoinGameRequest", password ? { game_id: id, password } : { game_id: id });
  }

  function renderOpenGames() {
    const me = state.me?.player_id;
    const list = $("open-games");
    // Typed passwords survive the list being drawn again.
    const typed = new Map([...list.querySelectorAll(".join-password")].map((input) => [input.dataset.testid, input.value]));
    list.replaceChildren(...(state.open.length ? state.open.map((o) => {
      const c = o.configuration;
      const seated = o.players ?? [];
      const mine = seated.some((p) => p.player_id === me);
      const name = state.catalogue.name(c.rules);
      const creator = seated[0]?.name ?? "?";
      const password = node("input", {
        type: "password", class: "join-password", placeholder: "password", "aria-label": `Password for game ${o.game_id}`,
        "data-testid": `join-password-${o.game_id}`, autocomplete: "off", value: typed.get(`join-password-${o.game_id}`) ?? "",
      });
      let action;
      if (mine) {
        action = node("button", {
          type: "button", "data-testid": `show-open-${o.game_id}`,
          onclick: () => { game(state, o.game_id); fx.refresh(o.game_id); fx.draw(fx.select(o.game_id)); },
        }, "Yours: open");
      } else if (name) {
        action = node("form", { class: "row join-form" }, c.private ? password : null,
          node("button", { type: "submit", class: "primary", "data-testid": `join-${o.game_id}` }, "Join"));
        action.addEventListener("submit", (event) => join(event, o.game_id));
      } else action = node("span", { class: "badge" }, "another client's game");
      return node("li", { class: "game-item open-game-item", "data-testid": `open-game-item-${o.game_id}` },
        node("div", { class: "game-name" }, `${name ?? c.game_type} #${o.game_id}`,
          c.private ? node("span", { class: "badge lock", title: "A password is needed to join", "data-testid": `lock-${o.game_id}` }, lockIcon(), "password") : null,
          c.ranked ? node("span", { class: "badge" }, "ranked") : null),
        node("div", { class: "game-meta" }, `by ${creator} · ${seated.length}/${c.max_players} seats · ${clockText(c)}`),
        action);
    }) : [node("li", { class: "empty" }, "No open games: create one!")]));
  }

  function render() {
    renderPlayers();
    renderOpenGames();
  }
  return { panel: "lobby", render };
}
