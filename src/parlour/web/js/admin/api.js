// The admin routes (docs/operations.md, "Admins and moderation"): JSON over fetch, the session
// token in Authorization. The token lives in sessionStorage: it goes with the tab.

const KEY = "parlour.admin.session";

export function session() {
  try { return JSON.parse(sessionStorage.getItem(KEY) || "null"); } catch { return null; }
}

export function forget() { sessionStorage.removeItem(KEY); }

/** POST /api/sessions; the session kept, or an Error with the server's words. */
export async function signIn(name, password) {
  const { status, body } = await call("POST", "api/sessions", { name, password }, null);
  if (status !== 200) throw new Error(body.error || `sign-in refused (${status})`);
  const kept = { name: body.name, token: body.token };
  sessionStorage.setItem(KEY, JSON.stringify(kept));
  return kept;
}

/** One request: {status, body}. 401 forgets the session (signed out, or revoked). */
export async function call(method, path, body = undefined, token = session()?.token) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  const reply = await fetch(new URL(path, window.location.href).href, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  let answer = {};
  try { answer = await reply.json(); } catch { answer = {}; }
  if (reply.status === 401 && token) forget();
  return { status: reply.status, body: answer };
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
