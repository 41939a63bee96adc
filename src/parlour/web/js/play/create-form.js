// The lobby's "Create a game" form: a game of the server's (its seats as the server allows them),
// either invitations (people by name, robots) or a game open to anyone (seats, a password), a clock
// and whether it is ranked.

import { node } from "../dom.js";

const $ = (id) => document.getElementById(id);

/** The clock choices: [seconds, increment per move]. */
const CLOCKS = { none: [0, 0], blitz: [300, 5], day: [86400, 0] };

/** The form; returns {invite(name), which adds a name to the invitations, and showGames(), which
 * offers the catalogue's games once it has come}. */
export function setupCreateForm(state, fx) {
  const catalogue = state.catalogue;

  function how() {
    return document.querySelector("input[name='create-how']:checked").value;
  }

  function sync() {
    const [low, high] = catalogue.seatRange($("create-rules").value) ?? [0, -1];
    const seats = $("create-seats");
    const chosen = Number(seats.value) || low;
    seats.replaceChildren(...Array.from({ length: high - low + 1 }, (_, i) => node("option", { value: String(low + i), selected: low + i === Math.min(high, Math.max(low, chosen)) }, String(low + i))));
    $("create-form").classList.toggle("how-open", how() === "open");
    $("create-form").classList.toggle("how-invite", how() === "invite");
    $("create").textContent = how() === "open" ? "Open the game" : "Send invitations";
    for (const element of document.querySelectorAll("#create-form .apologies-only")) element.hidden = $("create-rules").value !== "apologies";
  }

  /** The account ids of `names` (players in the lobby, buddies, players met in games), or an error. */
  function invitees(names) {
    const known = new Map();
    for (const p of [...state.players, ...state.buddies.values()]) known.set(p.name.toLowerCase(), p.player_id);
    for (const g of state.games.values()) for (const p of g.players) if (p.player_id) known.set(p.name.toLowerCase(), p.player_id);
    const ids = [];
    for (const name of names) {
      const id = known.get(name.toLowerCase());
      if (name.toLowerCase() === state.me?.name.toLowerCase()) return { error: ["Cannot invite yourself", "you take the first seat anyway"] };
      if (!id) return { error: ["Unknown player", `${name} is not in the lobby: a player must be signed in to be invited by name`] };
      if (!ids.includes(id)) ids.push(id);
    }
    return { ids };
  }

  function submit(event) {
    event.preventDefault();
    const rules = $("create-rules").value;
    const range = catalogue.seatRange(rules);
    if (!range) return fx.error("No game chosen", "the server's list of games did not load: reload the page");
    const [low, high] = range;
    const [clock, increment] = CLOCKS[$("create-clock").value];
    const config = { game_type: rules, rules, clock_seconds: clock, clock_increment_seconds: increment, ranked: $("create-ranked").checked };
    // Parlour extensions: the robots' level, and the rules' options (Apologies' mode).
    if ($("create-level").value) config.robot_level = $("create-level").value;
    if (rules === "apologies") config.options = { mode: $("create-mode").value };
    if (how() === "open") {
      const password = $("create-password").value;
      Object.assign(config, { min_players: low, max_players: Number($("create-seats").value) });
      if (password) Object.assign(config, { private: true, password });
      fx.send("LobbyCreateGameRequest", { configuration: config });
      return undefined;
    }
    const found = invitees($("create-invite").value.split(/[\s,]+/).filter(Boolean));
    if (found.error) return fx.error(...found.error);
    const robots = Number($("create-robots").value);
    const seats = 1 + found.ids.length + robots;
    if (!found.ids.length) return fx.error("Nobody invited", "invite at least one person: a game of robots alone is not allowed (open a game in the lobby instead)");
    if (seats < low || seats > high) return fx.error("Wrong number of players", `${catalogue.name(rules)} is played by ${low} to ${high} players; with you, this makes ${seats}`);
    Object.assign(config, { min_players: seats, max_players: seats });
    fx.send("EngageGameWithFriendsRequest", { friend_ids: [...found.ids, ...Array(robots).fill(0)], configuration: config });
    return undefined;
  }

  $("create-rules").addEventListener("change", sync);
  for (const radio of document.querySelectorAll("input[name='create-how']")) radio.addEventListener("change", sync);
  $("create-form").addEventListener("submit", submit);
  sync();

  function showGames() {
    $("create-rules").replaceChildren(...catalogue.games.map((g) => node("option", { value: g.rules }, g.name)));
    sync();
  }

  function invite(name) {
    $("create-box").open = true;
    const box = $("create-invite");
    const names = box.value.split(/[\s,]+/).filter(Boolean);
    if (!names.some((n) => n.toLowerCase() === name.toLowerCase())) names.push(name);
    box.value = names.join(", ");
    document.querySelector("[data-testid='create-how-invite']").checked = true;
    sync();
    box.focus();
  }

  return { invite, showGames };
}
