// The HTTP API of game records (src/parlour/api.py), client side: finished games newest first
// and one game with every move. Knows the paths and the answers' shapes; knows nothing about the
// page. Every failure is an ApiError whose message is a sentence for people.

/** A failed API call: `status` is the HTTP status (0 when the server could not be reached). */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/** The API's root next to the page (the server answers /api/ on the port that served it). */
export function apiBase(loc = window.location) {
  return new URL("api/", `${loc.origin}/`).href;
}

async function getJson(url) {
  let reply;
  try {
    reply = await fetch(url, { headers: { Accept: "application/json" }, cache: "no-store" });
  } catch (error) {
    throw new ApiError(0, `the server could not be reached (${error.message})`);
  }
  let body = null;
  try {
    body = await reply.json();
  } catch {
    body = null;
  }
  if (!reply.ok) {
    // The API names the problem in `error` (a bad parameter, no store, no such game).
    const said = body && typeof body.error === "string" ? body.error : `the server answered HTTP ${reply.status} ${reply.statusText}`.trim();
    throw new ApiError(reply.status, said);
  }
  if (body === null || typeof body !== "object") throw new ApiError(reply.status, "the server's answer was not readable");
  return body;
}

/** GET /api/games: {games: [summary...], next: cursor or null}. `player` keeps the games a
 * person (not a robot) sat in; `before` is the `next` of the previous page. */
export function listGames({ gameType = "apologies", player = null, limit = 10, before = null } = {}, base = apiBase()) {
  const url = new URL("games", base);
  if (gameType) url.searchParams.set("game_type", gameType);
  if (player) url.searchParams.set("player", player);
  if (limit) url.searchParams.set("limit", String(limit));
  if (before) url.searchParams.set("before", before);
  return getJson(url.href);
}

/** GET /api/games/{id}: the summary plus `initial` (the view before the first move) and `moves`
 * ([{seq, seat, handle, kind, at, view}], each view the position after that move). */
export function loadGame(id, base = apiBase()) {
  return getJson(new URL(`games/${encodeURIComponent(id)}`, base).href);
}
