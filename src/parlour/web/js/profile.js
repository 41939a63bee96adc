// A player's profile (profile.html?name=NAME): GET api/profile
// (src/parlour/protocols/async_ws/http/profile_http.py) drawn as the ratings now, their history per
// game (uPlot, vendored for the admin page), the recent games with their replays (GET
// api/async/replay, stepped through on the boards of the play page) and the record against each
// opponent. Every player's name links to theirs.

import uPlot from "../vendor/uplot/uPlot.esm.js";
import { createRulesBoard } from "./boards/index.js";
import { node } from "./dom.js";
import { readSession } from "./play/model.js";
import { describeAction, ratingChange, ratingText } from "./play/words.js";
import { profileLink } from "./profile-link.js";

const $ = (id) => document.getElementById(id);
const api = (path) => new URL(path, window.location.href).href;
const gameName = (type) => type.charAt(0).toUpperCase() + type.slice(1);
const when = (at) => new Date(at * 1000).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });

function showError(title, text) {
  $("errors").replaceChildren(node("div", { class: "error", "data-testid": "error" }, node("strong", {}, `${title}:`), ` ${text}`));
}

function renderRatings(ratings) {
  $("ratings").replaceChildren(...(ratings.length ? ratings.map((r) => node("tr", { "data-testid": `rating-${r.game_type}` },
    node("td", {}, gameName(r.game_type)),
    node("td", { class: `rating${r.provisional ? " provisional" : ""}`, title: r.provisional ? "provisional: fewer than 5 games" : null }, ratingText(r)),
    node("td", {}, String(r.games)))) : [node("tr", {}, node("td", { colSpan: 3, class: "empty" }, "No ranked game yet."))]));
}

let plots = [];

function renderCharts(history) {
  for (const plot of plots) plot.destroy();
  plots = [];
  const box = $("charts");
  box.replaceChildren();
  const types = Object.keys(history).sort();
  if (!types.length) {
    box.append(node("p", { class: "empty" }, "A chart appears after a first ranked game."));
    return;
  }
  const width = Math.max(260, Math.min(640, box.clientWidth - 8));
  for (const type of types) {
    const points = history[type];
    const figure = node("figure", { class: "profile-chart", "data-testid": `chart-${type}` }, node("h3", {}, gameName(type)));
    box.append(figure);
    // By games played rather than by date: games close in time would crowd the line. A history
    // that reaches back to the first game starts from the rating before it.
    const first = points[0];
    const start = first.games === 1 && first.change !== null ? [{ games: 0, rating: first.rating - first.change }] : [];
    const shown = [...start, ...points];
    const options = {
      width, height: 180,
      scales: { x: { time: false } },
      legend: { show: false },
      series: [{ label: "Games" }, { label: "Rating", stroke: "#1d6b5c", width: 2, points: { show: true, size: 6 }, value: (_, v) => (v == null ? "-" : String(v)) }],
      axes: [{ label: "games played", values: (_, ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : "")) }, { size: 52 }],
    };
    plots.push(new uPlot(options, [shown.map((p) => p.games), shown.map((p) => p.rating)], figure));
  }
}

function resultWords(game) {
  if (game.rank === null) return ["aborted", ""];
  const best = Math.min(...game.players.map((p) => p.rank ?? Infinity));
  const tied = game.players.filter((p) => p.rank === game.rank).length > 1;
  if (game.rank === best) return [tied ? "tied first" : "won", "won"];
  return [game.players.length === 2 ? "lost" : `#${game.rank}`, "lost"];
}

function renderRecent(name, recent) {
  $("recent-games").replaceChildren(...(recent.length ? recent.map((game) => {
    const [result, kind] = resultWords(game);
    const others = game.players.filter((p) => p.name.toLowerCase() !== name.toLowerCase());
    const rating = game.rating === null ? "" : ` · ${ratingText(game)}${game.change === null ? "" : ` (${ratingChange(game.change)})`}`;
    return node("li", { "data-testid": `recent-${game.game_id}` },
      node("div", {}, `${gameName(game.game_type)} #${game.game_id} `, node("span", { class: `result ${kind}` }, result), rating),
      node("div", { class: "game-meta" }, `${when(game.at)} · with `,
        ...others.flatMap((p, i) => [i ? ", " : "", p.robot ? `${p.name} (robot)` : profileLink(p.name)])),
      node("button", { type: "button", "data-testid": `replay-${game.game_id}`, onclick: () => openReplay(game.game_id) }, "Replay"));
  }) : [node("li", { class: "empty" }, "No game finished yet.")]));
}

function renderOpponents(opponents) {
  $("opponents").replaceChildren(...(opponents.length ? opponents.map((o) => node("tr", { "data-testid": `opponent-${o.name}` },
    node("td", {}, o.robot ? `${o.name} (robot)` : profileLink(o.name)),
    node("td", {}, String(o.wins)), node("td", {}, String(o.losses)), node("td", {}, String(o.draws)))) : [node("tr", {}, node("td", { colSpan: 4, class: "empty" }, "Nobody yet."))]));
}

// The replay of one game: its answer and the step shown, on a board of the play page.
let replay = null;

async function openReplay(gameId) {
  const session = readSession();
  // Signed in on this browser: a private game of one's own is readable too.
  const query = session ? `game_id=${gameId}&name=${encodeURIComponent(session.name)}` : `game_id=${gameId}`;
  let reply;
  let body = null;
  try {
    reply = await fetch(api(`api/async/replay?${query}`), { headers: session ? { Authorization: `Bearer ${session.token}` } : {} });
    body = await reply.json();
  } catch {
    showError("No replay", "the server cannot be reached");
    return;
  }
  if (!reply.ok) {
    showError("No replay", body?.error ?? `the server answered ${reply.status}`);
    return;
  }
  $("errors").replaceChildren();
  const host = $("board-host");
  host.replaceChildren();
  replay = { data: body, step: body.moves.length, board: createRulesBoard(body.rules, host, { onAction() {} }) };
  $("replay").hidden = false;
  $("replay-title").textContent = `Replay of ${gameName(body.rules)} #${body.game_id}`;
  drawReplay();
  $("replay").scrollIntoView({ block: "nearest" });
}

function drawReplay() {
  const { data, step, board } = replay;
  const total = data.moves.length;
  const move = step ? data.moves[step - 1] : null;
  const who = move ? data.players.find((p) => p.local_id === move.seat)?.name ?? `Seat ${move.seat}` : "";
  board.render({ view: move ? move.view : data.initial, legal: [], me: null });
  $("replay-step").textContent = move ? `Move ${step} of ${total}: ${who} ${describeAction(move.action)}` : `Start (${total} moves)`;
  $("replay").dataset.step = String(step);
  $("replay").dataset.total = String(total);
  $("replay-first").disabled = $("replay-prev").disabled = step === 0;
  $("replay-next").disabled = $("replay-last").disabled = step === total;
}

function step(to) {
  if (!replay) return;
  replay.step = Math.max(0, Math.min(replay.data.moves.length, to));
  drawReplay();
}

$("replay-first").addEventListener("click", () => step(0));
$("replay-prev").addEventListener("click", () => step(replay.step - 1));
$("replay-next").addEventListener("click", () => step(replay.step + 1));
$("replay-last").addEventListener("click", () => step(Infinity));
$("replay-close").addEventListener("click", () => {
  replay = null;
  $("replay").hidden = true;
  $("board-host").replaceChildren();
});

async function load() {
  const name = new URLSearchParams(window.location.search).get("name") ?? "";
  if (!name) {
    showError("No player", "the address names nobody (profile.html?name=...)");
    $("profile").setAttribute("aria-busy", "false");
    return;
  }
  let reply;
  let body = null;
  try {
    reply = await fetch(api(`api/profile?name=${encodeURIComponent(name)}`), { headers: { Accept: "application/json" } });
    body = await reply.json();
  } catch {
    showError("No profile", "the server cannot be reached");
    return;
  }
  $("profile").setAttribute("aria-busy", "false");
  if (!reply.ok) {
    $("profile-name").textContent = name;
    showError("No profile", body?.error ?? `the server answered ${reply.status}`);
    return;
  }
  document.title = `Parlour · ${body.name}`;
  $("profile-name").textContent = body.name;
  $("profile-presence").textContent = body.presence === "ONLINE" ? "online now" : "offline";
  renderRatings(body.ratings);
  renderCharts(body.history);
  renderRecent(body.name, body.recent);
  renderOpponents(body.opponents);
  $("profile").dataset.loaded = "true";
}

load();
