// The Apologies websocket protocol, client side (docs/apologies-protocol.md).
// Knows the envelope and the request shapes; knows nothing about the page. Events are delivered to
// handlers registered with on(<MessageType NAME>, fn); "open", "close" and "garbled" are the
// connection's own events.
import { emitFrames } from "./frames.js";

/** The websocket URL: ?ws=<url> when given (development against another server), else the host
 * and port that served the page; the server accepts any path. */
export function socketUrl(loc = window.location) {
  const override = new URLSearchParams(loc.search).get("ws");
  if (override) return override;
  const scheme = loc.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${loc.host}/ws`;
}

export class ApologiesClient {
  constructor(url) {
    this.url = url;
    this.socket = null;
    /** The registered player's id; added to every request but REGISTER_PLAYER. */
    this.playerId = null;
    this.handlers = new Map();
  }

  on(type, handler) {
    if (!this.handlers.has(type)) this.handlers.set(type, []);
    this.handlers.get(type).push(handler);
    return this;
  }

  emit(type, payload) {
    for (const handler of this.handlers.get(type) ?? []) handler(payload);
    for (const handler of this.handlers.get("*") ?? []) handler(type, payload);
  }

  get connected() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  connect() {
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.addEventListener("open", () => this.emit("open"));
    socket.addEventListener("close", (event) => {
      if (this.socket === socket) this.emit("close", { code: event.code, reason: event.reason });
    });
    emitFrames(socket, "message", (name, message) => this.emit(name, message));
  }

  /** One request; `playerId` overrides the registered id (REREGISTER_PLAYER carries the stored one). */
  send(message, context = null, playerId = this.playerId) {
    if (!this.connected) throw new Error("not connected to the server");
    const body = { message };
    if (message !== "REGISTER_PLAYER" && playerId) body.player_id = playerId;
    // A null context is the same as none; requests without context omit the key.
    if (context !== null) body.context = context;
    this.socket.send(JSON.stringify(body));
  }

  register(handle) { this.send("REGISTER_PLAYER", { handle }); }
  reregister(playerId, handle) { this.send("REREGISTER_PLAYER", { handle }, playerId); }
  unregister() { this.send("UNREGISTER_PLAYER"); }
  listPlayers() { this.send("LIST_PLAYERS"); }
  listGames() { this.send("LIST_AVAILABLE_GAMES"); }

  /** ADVERTISE_GAME: all five keys are required; `robot_level` is a Parlour extension (easy,
   * normal or hard), sent only when chosen. */
  advertise({ name, mode, players, visibility, invitedHandles, robotLevel }) {
    const context = { name, mode, players, visibility, invited_handles: invitedHandles };
    if (robotLevel) context.robot_level = robotLevel;
    this.send("ADVERTISE_GAME", context);
  }

  join(gameId) { this.send("JOIN_GAME", { game_id: gameId }); }
  quit() { this.send("QUIT_GAME"); }
  start() { this.send("START_GAME"); }
  cancel() { this.send("CANCEL_GAME"); }
  execute(moveId) { this.send("EXECUTE_MOVE", { move_id: moveId }); }
  optimal() { this.send("OPTIMAL_MOVE"); }
  retrieveState() { this.send("RETRIEVE_GAME_STATE"); }
  sendMessage(text, handles) { this.send("SEND_MESSAGE", { message: text, recipient_handles: handles }); }
}
