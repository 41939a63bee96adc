// What the server says about itself before the page plays (GET api/async/catalogue, served by
// src/parlour/protocols/async_ws/reference/catalogue.py): the games with their names and seat
// ranges, and the words for every code its messages carry. The page keeps no copy of these: a game
// added to the server, or a code, shows up here without touching the client.

/** The server's answer; throws when the server cannot be reached or answers badly. */
export async function fetchCatalogue() {
  const reply = await fetch(new URL("api/async/catalogue", window.location.href).href, { headers: { Accept: "application/json" } });
  if (!reply.ok) throw new Error(`the server answered ${reply.status}`);
  return reply.json();
}

/** Lookups over the server's answer: empty (no games, no words) until fill() gives it one. */
export class Catalogue {
  constructor() {
    this.fill({});
  }

  fill(body) {
    this.games = body.games ?? [];
    this.words = {
      errors: body.errors ?? {},
      join: body.join_denied ?? {},
      start: body.start_denied ?? {},
      observe: body.observe_denied ?? {},
      connection: body.connection_errors ?? {},
    };
  }

  /** The game played under `rules`, or undefined for client-rules and unknown games. */
  game(rules) {
    return this.games.find((g) => g.rules === rules);
  }

  /** The game's name ("Fish"), or undefined. */
  name(rules) {
    return this.game(rules)?.name;
  }

  /** [fewest, most] seats of `rules` (undefined for an unknown game). */
  seatRange(rules) {
    const g = this.game(rules);
    return g ? [g.min_seats, g.max_seats] : undefined;
  }

  /** The words for `code` in one of the lists ("errors", "join", "start", "observe", "connection"). */
  says(list, code) {
    return this.words[list][code];
  }
}
