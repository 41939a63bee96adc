// The Tsuro board (server rules, src/parlour/protocols/async_ws/game/rules.py; tiles and ports as
// in src/parlour/games/tsuro/tiles.py): a 10 x 10 board, ports A-H clockwise from the top-left
// (A, B top; C, D right; E, F bottom; G, H left), tiles turned clockwise by 0/90/180/270 degrees.
// Actions: "tile T rotation R at X,Y" (+ " port P" on a first placement). Choose a tile from your
// hand, turn it, then click the glowing square (first placement: a square on the edge, then the
// port you enter by). Each avatar's path is drawn in its colour. Implements the server-rules board
// interface of ./index.js.

import { node } from "../dom.js";
import { TapAreas, activate, el, swapKeepingFocus } from "./svg.js";

const PORTS = "ABCDEFGH";
const SPECS = (
  "AE BF CH DG|AE BF CG DH|AF BE CH DG|AE BD CG FH|AH BC DE FG|AE BC DH FG|AE BC DG FH|AD BG CF EH|AD BF CG EH|" +
  "AD BE CH FG|AD BE CG FH|AD BC EH FG|AC BH DF EG|AC BH DE FG|AC BG DF EH|AC BG DE FH|AC BF DH EG|AC BF DG EH|" +
  "AC BE DH FG|AC BE DG FH|AC BD EH FG|AC BD EG FH|AB CH DG EF|AB CH DF EG|AB CH DE FG|AB CG DH EF|AB CG DF EH|" +
  "AB CG DE FH|AB CF DH EG|AB CF DG EH|AB CE DH FG|AB CE DG FH|AB CD EH FG|AB CD EG FH|AB CD EF GH"
).split("|");

/** TILES[t][port] = the port the path from `port` leads to, at rotation 0. */
export const TILES = SPECS.map((spec) => {
  const other = new Array(8).fill(0);
  for (const pair of spec.split(" ")) {
    const a = PORTS.indexOf(pair[0]);
    const b = PORTS.indexOf(pair[1]);
    other[a] = b;
    other[b] = a;
  }
  return other;
});
/** The port a path enters on the neighbouring square: A-F, B-E, C-H, D-G. */
const MATCH = [5, 4, 7, 6, 1, 0, 3, 2];
const SIDE_STEP = [[0, -1], [1, 0], [0, 1], [-1, 0]];
/** Each port's place on a unit square, and the direction into the square. */
const PORT_AT = [[1 / 3, 0], [2 / 3, 0], [1, 1 / 3], [1, 2 / 3], [2 / 3, 1], [1 / 3, 1], [0, 2 / 3], [0, 1 / 3]];
const INWARD = [[0, 1], [-1, 0], [0, -1], [1, 0]];
const PORT_WORDS = ["top, left", "top, right", "right, upper", "right, lower", "bottom, right", "bottom, left", "left, lower", "left, upper"];

export const TSURO_COLORS = { white: "#f4f4f4", black: "#222222", red: "#d8343a", green: "#23985a", blue: "#2f6fd8" };
const ORDER = ["white", "black", "red", "green", "blue"];
const STATES = { DEAD: "eliminated", COLLIDED: "eliminated (collision)", EJECTED: "out (left the game)" };

const CELL = 60;
const MARGIN = 26;

export function exitPort(tile, rotation, entry) {
  const turn = 2 * (rotation / 90);
  return (((TILES[tile][(((entry - turn) % 8) + 8) % 8] + turn) % 8) + 8) % 8;
}

function portPoint(x, y, port) {
  const [fx, fy] = PORT_AT[port];
  return [MARGIN + (x + fx) * CELL, MARGIN + (y + fy) * CELL];
}

/** The SVG path of one connection of a tile at (x, y): a curve leaving each port straight inwards. */
function curve(x, y, a, b) {
  const [ax, ay] = portPoint(x, y, a);
  const [bx, by] = portPoint(x, y, b);
  const [nax, nay] = INWARD[Math.floor(a / 2)];
  const [nbx, nby] = INWARD[Math.floor(b / 2)];
  const k = CELL * 0.42;
  return `M${ax} ${ay} C${ax + nax * k} ${ay + nay * k} ${bx + nbx * k} ${by + nby * k} ${bx} ${by}`;
}

function tilePaths(x, y, tile, rotation) {
  const turn = 2 * (rotation / 90);
  const done = new Set();
  const paths = [];
  for (let p = 0; p < 8; p++) {
    const q = TILES[tile][p];
    if (done.has(p)) continue;
    done.add(p);
    done.add(q);
    paths.push(curve(x, y, (p + turn) % 8, (q + turn) % 8));
  }
  return paths;
}

/** The squares and ports an avatar went through, from its entry to where it stands. */
export function trail(player, tiles) {
  if (!player.start || !player.at) return [];
  const placed = new Map(tiles.map(([x, y, tile, rotation]) => [`${x},${y}`, [tile, rotation]]));
  const steps = [];
  let [x, y, letter] = player.start;
  let entry = PORTS.indexOf(letter);
  const [ax, ay, aport] = player.at;
  for (let i = 0; i < 200; i++) {
    const cell = placed.get(`${x},${y}`);
    if (!cell) break;
    const exit = exitPort(cell[0], cell[1], entry);
    steps.push([x, y, entry, exit]);
    if (x === ax && y === ay && PORTS[exit] === aport) break;
    const [dx, dy] = SIDE_STEP[Math.floor(exit / 2)];
    x += dx;
    y += dy;
    entry = MATCH[exit];
  }
  return steps;
}

/** The legal actions by tile, rotation, square and port. */
function indexTsuro(legal) {
  const byKey = new Map();
  const squares = new Map(); // "T|R" -> Map "X,Y" -> Map port letter ("" if none) -> action
  let first = false;
  for (const action of legal) {
    const m = /^tile (\d+) rotation (\d+) at (\d+),(\d+)(?: port ([A-H]))?$/.exec(action);
    if (!m) continue;
    const [, t, r, x, y, port = ""] = m;
    if (port) first = true;
    byKey.set(`${t}|${r}|${x},${y}|${port}`, action);
    const combo = `${t}|${r}`;
    if (!squares.has(combo)) squares.set(combo, new Map());
    const at = squares.get(combo);
    if (!at.has(`${x},${y}`)) at.set(`${x},${y}`, new Map());
    at.get(`${x},${y}`).set(port, action);
  }
  return { byKey, squares, first };
}

function tileIcon(tile, rotation) {
  const svg = el("svg", { viewBox: `${MARGIN} ${MARGIN} ${CELL} ${CELL}`, class: "tile-icon", "aria-hidden": "true" });
  el("rect", { x: MARGIN, y: MARGIN, width: CELL, height: CELL, rx: 4, class: "tile-face" }, svg);
  for (const d of tilePaths(0, 0, tile, rotation)) el("path", { d, class: "tile-path" }, svg);
  return svg;
}

export class TsuroBoard {
  static kind = "tsuro";

  static seatColor(localId, view = null) {
    const color = view?.players?.find((p) => p.id === localId)?.color ?? ORDER[(localId - 1) % ORDER.length];
    return TSURO_COLORS[color] ?? "#999";
  }

  static seatDetail(view, localId) {
    const player = view?.players?.find((p) => p.id === localId);
    if (!player) return "";
    if (player.state !== "ALIVE") return STATES[player.state] ?? player.state.toLowerCase();
    return player.at ? "on the board" : "not placed yet";
  }

  constructor(host, { onAction = () => {} } = {}) {
    this.onAction = onAction;
    this.tile = null;
    this.rotation = 0;
    this.square = null;
    this.scene = null;
    this.svg = el("svg", { role: "group", "aria-label": "Tsuro board", "data-testid": "board", class: "board tsuro-board" });
    const size = 2 * MARGIN + 10 * CELL;
    this.svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
    const base = el("g", { class: "static" }, this.svg);
    el("rect", { x: 0, y: 0, width: size, height: size, rx: 14, class: "tsuro-frame" }, base);
    for (let y = 0; y < 10; y++) {
      for (let x = 0; x < 10; x++) {
        el("rect", { x: MARGIN + x * CELL + 1, y: MARGIN + y * CELL + 1, width: CELL - 2, height: CELL - 2, rx: 3, class: "square" }, base);
      }
    }
    this.layer = el("g", {}, this.svg);
    this.taps = new TapAreas(this.svg, CELL / 2);
    this.controls = node("div", { class: "tsuro-controls", "data-testid": "tsuro-controls" });
    this.hint = node("p", { class: "hint board-hint", "data-testid": "board-hint" });
    host.replaceChildren(this.svg, this.controls, this.hint);
  }

  render(scene) {
    this.scene = scene;
    const { view, legal = [], me = null } = scene;
    if (!view) return;
    this.svg.setAttribute("data-legal", JSON.stringify(legal));
    const index = indexTsuro(legal);
    const hand = view.you && view.turn === me ? view.you.hand ?? [] : [];
    const mine = legal.length > 0 && hand.length > 0;
    if (!mine) {
      this.tile = null;
      this.square = null;
    } else if (!hand.includes(this.tile)) {
      this.tile = hand[0];
      this.rotation = 0;
      this.square = null;
    }
    this.svg.setAttribute("data-rotation", String(this.rotation));
    this.svg.setAttribute("data-tile", this.tile ?? "");
    const combo = mine ? index.squares.get(`${this.tile}|${this.rotation}`) ?? new Map() : new Map();
    if (this.square && !combo.has(this.square)) this.square = null;

    const layer = el("g");
    this.taps.begin(layer);
    // Placed tiles, then every avatar's path in its colour, then the avatars.
    for (const [x, y, tile, rotation] of view.tiles) {
      el("rect", { x: MARGIN + x * CELL + 1, y: MARGIN + y * CELL + 1, width: CELL - 2, height: CELL - 2, rx: 3, class: "tile-face", "data-testid": `placed-${x}-${y}` }, layer);
      for (const d of tilePaths(x, y, tile, rotation)) el("path", { d, class: "tile-path" }, layer);
    }
    for (const player of view.players) {
      const color = TSURO_COLORS[player.color] ?? "#999";
      const steps = trail(player, view.tiles);
      const under = player.color === "black" ? "#ffffff" : "#1b1b1b";
      const group = el("g", { class: `trail${player.state === "ALIVE" ? "" : " out"}`, "data-testid": `trail-${player.id}` }, layer);
      for (const [x, y, a, b] of steps) el("path", { d: curve(x, y, a, b), stroke: under, class: "trail-under" }, group);
      for (const [x, y, a, b] of steps) el("path", { d: curve(x, y, a, b), stroke: color, class: "trail-line" }, group);
    }

    // Where the selected tile may go.
    const targets = el("g", { class: "targets" }, layer);
    if (mine) this.drawTargets(targets, index, combo);

    for (const player of view.players) {
      const where = player.at ?? null;
      if (!where) continue;
      const [px, py] = portPoint(where[0], where[1], PORTS.indexOf(where[2]));
      const alive = player.state === "ALIVE";
      const avatar = el("g", {
        class: `avatar${alive ? "" : " out"}${player.id === me ? " mine" : ""}`, "data-testid": `avatar-${player.id}`,
        "data-state": player.state, "data-at": where.join(","), transform: `translate(${px.toFixed(1)} ${py.toFixed(1)})`,
      }, layer);
      el("title", {}, avatar, `${player.color}${player.id === me ? " (you)" : ""}: ${TsuroBoard.seatDetail(view, player.id)}`);
      el("circle", { r: 11, fill: TSURO_COLORS[player.color] ?? "#999", class: "avatar-body" }, avatar);
      if (!alive) el("path", { d: "M-6 -6 L6 6 M6 -6 L-6 6", class: "avatar-cross" }, avatar);
    }
    swapKeepingFocus(this.layer, layer);
    this.layer = layer;
    this.renderControls(mine, hand, index, combo);
  }

  drawTargets(group, index, combo) {
    for (const [square, ports] of combo) {
      const [x, y] = square.split(",").map(Number);
      const chosen = index.first ? square === this.square : true;
      const target = el("g", { class: `target${chosen ? " chosen" : ""}`, "data-testid": `square-${x}-${y}`, "data-square": square }, group);
      if (chosen) {
        const preview = el("g", { class: "preview" }, target);
        el("rect", { x: MARGIN + x * CELL + 1, y: MARGIN + y * CELL + 1, width: CELL - 2, height: CELL - 2, rx: 3, class: "tile-face" }, preview);
        for (const d of tilePaths(x, y, this.tile, this.rotation)) el("path", { d, class: "tile-path" }, preview);
      }
      el("rect", { x: MARGIN + x * CELL + 3, y: MARGIN + y * CELL + 3, width: CELL - 6, height: CELL - 6, rx: 5, class: "target-ring" }, target);
      const middle = [MARGIN + (x + 0.5) * CELL, MARGIN + (y + 0.5) * CELL];
      if (!index.first) {
        const action = ports.get("");
        activate(target, `square-${square}`, `Place tile ${this.tile} turned ${this.rotation}° on ${square}`, () => this.commit(action), this.taps, middle);
      } else {
        activate(target, `square-${square}`, `Start on the edge square ${square}`, () => {
          this.square = square;
          this.render(this.scene);
        }, this.taps, middle);
        if (chosen) {
          for (const [letter, action] of ports) {
            const p = PORTS.indexOf(letter);
            const [px, py] = portPoint(x, y, p);
            const [nx, ny] = INWARD[Math.floor(p / 2)];
            const at = [px - nx * 12, py - ny * 12];
            const marker = el("g", { class: "port-marker", "data-testid": `port-marker-${letter}`, transform: `translate(${at[0].toFixed(1)} ${at[1].toFixed(1)})` }, group);
            el("circle", { r: 11 }, marker);
            el("text", { y: 4.5 }, marker, letter);
            activate(marker, `port-${square}-${letter}`, `Enter at port ${letter}`, () => this.commit(action), this.taps, at);
          }
        }
      }
    }
  }

  commit(action) {
    if (!action) return;
    this.square = null;
    this.onAction(action);
  }

  renderControls(mine, hand, index, combo) {
    if (!mine) {
      this.controls.replaceChildren();
      this.hint.textContent = "";
      this.hint.hidden = true;
      return;
    }
    const tiles = hand.map((tile) => node("button", {
      type: "button", class: `hand-tile${tile === this.tile ? " selected" : ""}`, "data-testid": `tsuro-tile-${tile}`,
      "aria-pressed": tile === this.tile ? "true" : "false", "aria-label": `Tile ${tile}`, title: `Tile ${tile}`,
      onclick: () => {
        this.tile = tile;
        this.square = null;
        this.render(this.scene);
      },
    }, tileIcon(tile, tile === this.tile ? this.rotation : 0)));
    const turn = (step) => () => {
      this.rotation = (this.rotation + step + 360) % 360;
      this.render(this.scene);
    };
    const row = [
      node("span", { class: "hand-label" }, "Your tiles"),
      ...tiles,
      node("button", { type: "button", class: "rotate", "data-testid": "rotate-left", "aria-label": "Turn the tile left", onclick: turn(-90) }, "⟲ Left"),
      node("button", { type: "button", class: "rotate", "data-testid": "rotate-right", "aria-label": "Turn the tile right", onclick: turn(90) }, "⟳ Right"),
    ];
    let hint = "";
    if (!index.first) {
      const [square] = [...index.squares.values()].flatMap((m) => [...m.keys()]);
      const action = combo.size ? [...combo.values()][0].get("") : null;
      row.push(node("button", {
        type: "button", class: "primary", "data-testid": "place-tile", disabled: !action,
        onclick: () => this.commit(action),
      }, "Place tile"));
      hint = action
        ? `Turn the tile as you like, then click the glowing square (${square}) or Place tile.`
        : "Turned this way the tile would take you off the board or into another avatar: turn it, or choose another tile.";
    } else if (this.square) {
      const ports = combo.get(this.square) ?? new Map();
      const [x, y] = this.square.split(",");
      row.push(node("div", { class: "ports", "data-testid": "tsuro-ports" },
        node("span", { class: "hand-label" }, `Enter square ${x},${y} by`),
        ...[...ports].map(([letter, action]) => node("button", {
          type: "button", class: "primary", "data-testid": `port-${letter}`, onclick: () => this.commit(action),
        }, `${letter} (${PORT_WORDS[PORTS.indexOf(letter)]})`))));
      hint = "Choose the port your avatar enters by.";
    } else {
      hint = combo.size
        ? "First placement: choose a tile and turn it, then click a glowing square on the edge."
        : "Turned this way the tile has no safe start: turn it, or choose another tile.";
    }
    this.controls.replaceChildren(...row);
    this.hint.textContent = hint;
    this.hint.hidden = false;
  }
}
