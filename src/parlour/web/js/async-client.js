// The /async protocol, client side (docs/async-protocol.md): accounts over HTTP, one websocket
// of JSON text frames {"type": <MessageName>, ...fields}, the pushed lobby lists (base64 of
// zlib-deflated JSON). Knows nothing about the page: handlers are registered with on(<type>, fn);
// "open", "close" and "garbled" are the connection's own events.
import { emitFrames } from "./frames.js";

/** The /async websocket URL: ?async=<url> when given, else the host and port that served the page. */
export function asyncUrl(loc = window.location) {
  const override = new URLSearchParams(loc.search).get("async");
  if (override) return override;
  const scheme = loc.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${loc.host}/async`;
}

/** A refused HTTP request, with the server's own words when it gave some. */
export class AccountError extends Error {
  constructor(status, message, retryAfter = null) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

const ACCOUNT_WORDS = {
  401: "Wrong name or password.",
  409: "This name is taken: choose another one, or sign in if it is yours.",
  429: "Too many failed sign-ins",
  503: "The server could not save this; try again.",
};

async function postJson(path, body) {
  let reply;
  try {
    reply = await fetch(new URL(path, window.location.href).href, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
  } catch {
    throw new AccountError(0, "The server cannot be reached: check the connection and try again.");
  }
  let answer = null;
  try {
    answer = await reply.json();
  } catch {
    answer = null;
  }
  if (!reply.ok) {
    const retry = reply.headers.get("Retry-After");
    let words = ACCOUNT_WORDS[reply.status] ?? (answer && typeof answer.error === "string" ? capital(answer.error) : `The server answered ${reply.status}.`);
    if (reply.status === 429) words = `${words}: try again in ${retry ?? "a few"} seconds.`;
    if (reply.status === 400 && answer && typeof answer.error === "string") words = `${capital(answer.error)}.`;
    throw new AccountError(reply.status, words, retry);
  }
  return answer ?? {};
}

function capital(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

/** POST /api/accounts: {player_id, name}. */
export function createAccount(name, password) {
  return postJson("api/accounts", { name, password });
}

/** POST /api/sessions: {token, expires, player_id, name}. */
export function signIn(name, password) {
  return postJson("api/sessions", { name, password });
}

/** A pushed lobby list: base64 of zlib-deflated JSON (S13), inflated in the browser. */
export async function inflateList(text) {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(stream).text());
}

export class AsyncClient {
  constructor(url) {
    this.url = url;
    this.socket = null;
    this.handlers = new Map();
    this.counter = 0;
    this.pinger = null;
  }

  on(type, handler) {
    if (!this.handlers.has(type)) this.handlers.set(type, []);
    this.handlers.get(type).push(handler);
    return this;
  }

  emit(type, payload) {
    for (const handler of this.handlers.get(type) ?? []) handler(payload);
  }

  get connected() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  connect() {
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) return;
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.addEventListener("open", () => {
      // A connection silent for 60 s is closed by the server (S5): ping well before.
      clearInterval(this.pinger);
      this.pinger = setInterval(() => {
        if (this.connected) this.send("PingRequest", { timestamp: Date.now() });
      }, 20_000);
      this.emit("open");
    });
    socket.addEventListener("close", (event) => {
      if (this.socket !== socket) return;
      clearInterval(this.pinger);
      this.socket = null;
      this.emit("close", { code: event.code, reason: event.reason });
    });
    emitFrames(socket, "type", (name, message) => this.emit(name, message));
  }

  close() {
    const socket = this.socket;
    this.socket = null;
    clearInterval(this.pinger);
    if (socket) socket.close(1000, "signed out");
  }

  /** One request; returns its request_id (echoed by the direct reply, S2). */
  send(type, fields = {}) {
    if (!this.connected) throw new Error("not connected to the server");
    const requestId = `r${++this.counter}`;
    const body = { type, ...fields };
    if (type !== "PingRequest") body.request_id = requestId;
    this.socket.send(JSON.stringify(body));
    return requestId;
  }
}
