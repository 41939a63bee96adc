// The admin page: sign in, then five screens over the admin routes (js/admin/api.js). Each
// screen is drawn from one answer of the server when it is opened or changed; nothing is kept
// between screens but the session.
import { forget, get, post, session, signIn } from "./admin/api.js";
import { draw } from "./admin/charts.js";
import { node } from "./dom.js";

const $ = (id) => document.getElementById(id);
const SCREENS = ["dashboard", "players", "reports", "games", "audit"];
let refresher = null;

function when(seconds) {
  return seconds == null ? "-" : new Date(seconds * 1000).toISOString().replace("T", " ").slice(0, 19);
}

function notice(text, ok = false) {
  const box = $("notice");
  box.textContent = text;
  box.classList.toggle("ok", ok);
}

/** A route's answer: its body if it succeeded, else null with the server's words shown. */
async function ask(request) {
  const { status, body } = await request;
  if (status === 401) { start(); notice(body.error || "signed out"); return null; }
  if (status >= 400) { notice(body.error || `refused (${status})`); return null; }
  return body;
}

function start() {
  const kept = session();
  $("signin").hidden = Boolean(kept);
  $("tabs").hidden = !kept;
  $("who").textContent = kept ? `${kept.name} · ` : "";
  if (kept) {
    $("who").append(node("button", { type: "button", "data-testid": "sign-out", onclick: () => { forget(); start(); } }, "Sign out"));
    open(location.hash.slice(1) || "dashboard");
  } else {
    for (const screen of SCREENS) $(screen).hidden = true;
  }
}

function open(screen) {
  if (!SCREENS.includes(screen)) screen = "dashboard";
  history.replaceState(null, "", `#${screen}`);
  for (const name of SCREENS) $(name).hidden = name !== screen;
  for (const tab of document.querySelectorAll("[data-tab]")) {
    if (tab.dataset.tab === screen) tab.setAttribute("aria-current", "page"); else tab.removeAttribute("aria-current");
  }
  clearInterval(refresher);
  refresher = null;
  ({ dashboard, players: () => search(""), reports, games, audit })[screen]();
}

async function dashboard() {
  const body = await ask(get("api/admin/dashboard"));
  if (body) draw($("charts"), body.samples);
  refresher = refresher || setInterval(() => { if (!$("dashboard").hidden) dashboard(); }, 10_000);
}

// -- Players ---------------------------------------------------------------------------------

async function search(q) {
  const body = await ask(get(`api/admin/players?q=${encodeURIComponent(q)}`));
  if (!body) return;
  const rows = body.players.map((p) => node("tr", {},
    node("td", {}, node("button", { type: "button", class: "link", "data-testid": `player-${p.name}`, onclick: () => profile(p.name) }, p.name)),
    node("td", {}, when(p.created)), node("td", {}, p.online ? "yes" : "no"), node("td", {}, p.banned ? "yes" : "no")));
  document.querySelector("[data-testid='player-list'] tbody").replaceChildren(...rows);
}

function field(label, value) {
  return [node("dt", {}, label), node("dd", {}, value)];
}

function actionForm(label, testid, inputs, submit) {
  const form = node("form", { "data-testid": testid }, node("strong", {}, label), ...inputs,
    node("label", {}, "Reason ", node("input", { name: "reason", required: true, "data-testid": `${testid}-reason` })),
    node("button", { type: "submit", "data-testid": `${testid}-go` }, label));
  form.addEventListener("submit", (event) => { event.preventDefault(); submit(new FormData(form)); });
  return form;
}

function minutes(testid, placeholder) {
  return node("label", {}, "Minutes ", node("input", { name: "minutes", type: "number", min: "0", placeholder, "data-testid": testid }));
}

async function act(path, body, name) {
  const done = await ask(post(path, body));
  if (done) { notice(`${path.split("/").pop()}: done`, true); await profile(name); }
  return done;
}

async function profile(name) {
  const p = await ask(get(`api/admin/player?name=${encodeURIComponent(name)}`));
  if (!p) return;
  const box = $("profile");
  box.hidden = false;
  const ratings = Object.entries(p.ratings).map(([game, r]) => `${game} ${r.shown} (${r.games} games; ordinal ${r.rating})`).join(", ") || "-";
  const reports = (list) => list.map((r) => `${when(r.at)} ${r.reporter} → ${r.reported}: ${r.text}`).join("\n") || "-";
  const resetOut = node("p", { class: "token", hidden: true, "data-testid": "reset-token" });
  box.replaceChildren(
    node("h2", { "data-testid": "profile-name" }, p.name),
    node("dl", { class: "profile-grid" },
      ...field("Created", when(p.created)), ...field("Last seen", p.online ? "online now" : when(p.last_seen)),
      ...field("Role", p.role || "player"),
      ...field("Banned", p.ban ? `${p.ban.reason} (until ${p.ban.until ? when(p.ban.until) : "for good"})` : "no"),
      ...field("Muted until", when(p.muted_until)), ...field("Ratings", ratings),
      ...field("Games", `${p.games.rated} rated, live: ${p.games.live.join(", ") || "none"}`),
      ...field("Devices", p.devices.join(", ") || "-"),
      ...field("Reports by", reports(p.reports_by)), ...field("Reports against", reports(p.reports_against))),
    node("div", { class: "actions" },
      actionForm("Mute", "mute", [minutes("mute-minutes", "0 lifts it")], (f) =>
        act("api/admin/mute", { name: p.name, minutes: Number(f.get("minutes") || 0), reason: f.get("reason") }, p.name)),
      actionForm("Ban", "ban", [minutes("ban-minutes", "empty: for good")], (f) =>
        act("api/admin/ban", { name: p.name, minutes: f.get("minutes") ? Number(f.get("minutes")) : null, reason: f.get("reason") }, p.name)),
      actionForm("Unban", "unban", [], (f) => act("api/admin/unban", { name: p.name, reason: f.get("reason") }, p.name)),
      actionForm("Force a password reset", "reset", [], async (f) => {
        const done = await act("api/admin/reset", { name: p.name, reason: f.get("reason") }, p.name);
        if (done) { resetOut.hidden = false; resetOut.textContent = `Hand this one-time token to ${p.name}: ${done.reset_token}`; $("profile").append(resetOut); }
      })));
}

// -- Reports, games, audit ---------------------------------------------------------------------

async function reports() {
  const body = await ask(get(`api/admin/reports?status=${$("report-status").value}`));
  if (!body) return;
  const items = body.reports.map((r) => {
    const context = node("ol", { class: "context" }, ...r.context.map((line) =>
      node("li", { class: line.reported ? "reported" : "" }, `${line.sender}: ${line.text}`)));
    const decide = (action) => actionForm(action[0].toUpperCase() + action.slice(1), `report-${action}`,
      action === "dismiss" ? [] : [minutes(`report-${action}-minutes`, action === "ban" ? "empty: for good" : "")], async (f) => {
        const body = { report: r.id, action, reason: f.get("reason") };
        if (action !== "dismiss") body.minutes = f.get("minutes") ? Number(f.get("minutes")) : null;
        if (await ask(post("api/admin/reports/act", body))) { notice(`report closed: ${action}`, true); reports(); }
      });
    return node("li", { "data-testid": "report" },
      node("p", {}, node("strong", {}, r.reporter), ` reported `, node("strong", {}, r.reported), ` ${when(r.at)}: ${r.text}`),
      context,
      r.closed ? node("p", { class: "fine" }, `closed by ${r.closed.by}: ${r.closed.decision.action}`)
        : node("div", { class: "actions" }, decide("dismiss"), decide("mute"), decide("ban")));
  });
  $("report-list").replaceChildren(...(items.length ? items : [node("li", { class: "fine" }, "No report here.")]));
}

/** Where a live game is watched: an /async game from the player page (as an observer, under
 * its observation rules), the others' record so far as a replay on the front page. */
function watchUrl(g) {
  const id = encodeURIComponent(g.game_id);
  return g.protocol === "async" ? `play.html?watch=${id}` : `./?replay=${id}`;
}

// The Games screen lists the live games or the finished ones (the switch); the finished ones a
// page at a time, "Older games" adding the next page under them.
let gamesShown = "live";
let olderGames = null; // the `next` of the last page of finished games shown

const HEADS = {
  live: ["Protocol", "Game", "State", "Players", "Spectate", ""],
  finished: ["Protocol", "Game", "State", "Players", "Ended", "Replay"],
};

function gameTable(kind) {
  const table = document.querySelector("[data-testid='game-list']");
  table.dataset.shows = kind;
  table.querySelector("thead tr").replaceChildren(...HEADS[kind].map((head) => node("th", {}, head)));
  return table.querySelector("tbody");
}

async function games() {
  for (const button of document.querySelectorAll("[data-games]")) button.setAttribute("aria-pressed", String(button.dataset.games === gamesShown));
  if (gamesShown === "finished") return finishedGames(null);
  $("games-older").hidden = true;
  const body = await ask(get("api/admin/games"));
  if (!body || gamesShown !== "live") return; // switched meanwhile: the other list is drawn
  const rows = body.games.map((g) => {
    const abort = actionForm("Abort", `abort-${g.game_id}`, [], async (f) => {
      if (await ask(post("api/admin/games/abort", { protocol: g.protocol, game_id: g.game_id, reason: f.get("reason") }))) {
        notice(`game ${g.game_id} aborted`, true); games();
      }
    });
    const watch = node("a", { href: watchUrl(g), target: "_blank", rel: "noopener", class: "go", "data-testid": `watch-${g.game_id}` }, "Watch");
    return node("tr", { "data-testid": "game" }, node("td", {}, g.protocol), node("td", {}, `${g.game} ${g.game_id}`),
      node("td", {}, g.state), node("td", {}, g.players.join(", ")), node("td", {}, watch), node("td", {}, abort));
  });
  gameTable("live").replaceChildren(...rows);
}

/** A page of finished games: the newest (`before` null), or the one after `before`. */
async function finishedGames(before) {
  const query = new URLSearchParams({ state: "finished" });
  if (before) query.set("before", before);
  const body = await ask(get(`api/admin/games?${query}`));
  if (!body || gamesShown !== "finished") return;
  const rows = body.games.map((g) => {
    // The server gives the replay's path from the site's root; the page is at the root too.
    const replay = g.replay
      ? node("a", { href: `.${g.replay}`, target: "_blank", rel: "noopener", class: "go", "data-testid": `replay-${g.protocol}-${g.game_id}` }, "Replay")
      : node("span", { class: "fine" }, "none");
    // Each cell names its column too: a phone shows a row as a card, without the table's head.
    const cells = [g.protocol, `${g.game} ${g.game_id}`, g.state, g.players.join(", ") || "-", when(g.ended), replay];
    return node("tr", { "data-testid": "finished-game" }, ...cells.map((cell, i) => node("td", { "data-label": cell === replay ? null : HEADS.finished[i] }, cell)));
  });
  const list = before ? document.querySelector("[data-testid='game-list'] tbody") : gameTable("finished");
  if (before) list.append(...rows);
  else list.replaceChildren(...(rows.length ? rows : [node("tr", {}, node("td", { colSpan: 6, class: "fine" }, "No finished game."))]));
  olderGames = body.next;
  $("games-older").hidden = !olderGames;
}

async function audit() {
  const filter = new FormData($("audit-filter"));
  const query = new URLSearchParams([...filter].filter(([, v]) => v));
  const body = await ask(get(`api/admin/audit?${query}`));
  if (!body) return;
  const rows = body.audit.map((a) => node("tr", { "data-testid": "audit-row" }, node("td", {}, when(a.at)), node("td", {}, a.actor),
    node("td", {}, a.action), node("td", {}, a.target), node("td", { class: "why" }, a.reason)));
  document.querySelector("[data-testid='audit-list'] tbody").replaceChildren(...rows);
}

// -- Wiring ------------------------------------------------------------------------------------

$("signin").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  try {
    await signIn(form.get("name"), form.get("password"));
    notice("");
    start();
  } catch (error) { notice(error.message); }
});
$("player-search").addEventListener("submit", (event) => { event.preventDefault(); search(new FormData(event.target).get("q")); });
$("audit-filter").addEventListener("submit", (event) => { event.preventDefault(); audit(); });
$("report-status").addEventListener("change", reports);
for (const button of document.querySelectorAll("[data-games]")) {
  button.addEventListener("click", () => { gamesShown = button.dataset.games; games(); });
}
$("games-older").addEventListener("click", () => { if (olderGames) finishedGames(olderGames); });
for (const tab of document.querySelectorAll("[data-tab]")) tab.addEventListener("click", () => open(tab.dataset.tab));
start();
