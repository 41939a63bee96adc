// The Fish board (server rules, src/parlour/protocols/async_ws/game/rules.py): a hex grid of
// `rows` x `columns` tiles, `fish[y][x]` fish on each (0 = a hole), odd rows drawn half a tile to
// the right; each player's penguins stand on tiles ([x, y]). Actions: "place X,Y" and
// "move X1,Y1 X2,Y2". Click a tile to place; click one of your penguins, then a tile it reaches.
// Implements the server-rules board interface of ./index.js.

import { TapAreas, activate, el, swapKeepingFocus } from "./svg.js";

const R = 36; // hex radius (centre to corner)
const W = Math.sqrt(3) * R;
const DY = 1.5 * R;
const PAD = 8;

export const FISH_COLORS = ["#d8343a", "#2f6fd8", "#23985a", "#b35c00"];
const FISH_NAMES = ["red", "blue", "green", "orange"];

function centre(x, y) {
  return [PAD + W / 2 + W * (x + (y % 2) * 0.5), PAD + R + DY * y];
}

function hexPoints(cx, cy, r = R - 1.5) {
  const points = [];
  for (let i = 0; i < 6; i++) {
    const angle = (Math.PI / 3) * i - Math.PI / 2;
    points.push(`${(cx + r * Math.cos(angle)).toFixed(1)},${(cy + r * Math.sin(angle)).toFixed(1)}`);
  }
  return points.join(" ");
}

/** The legal actions by kind: places (Set "X,Y") and moves (Map "X,Y" -> Map "X2,Y2" -> action). */
export function indexFish(legal) {
  const places = new Map();
  const moves = new Map();
  for (const action of legal) {
    const place = /^place (\d+,\d+)$/.exec(action);
    if (place) {
      places.set(place[1], action);
      continue;
    }
    const move = /^move (\d+,\d+) (\d+,\d+)$/.exec(action);
    if (move) {
      if (!moves.has(move[1])) moves.set(move[1], new Map());
      moves.get(move[1]).set(move[2], action);
    }
  }
  return { places, moves };
}

export class FishBoard {
  static kind = "fish";

  static seatColor(localId) {
    return FISH_COLORS[(localId - 1) % FISH_COLORS.length];
  }

  static seatDetail(view, localId) {
    const player = view?.players?.find((p) => p.id === localId);
    if (!player) return "";
    return player.removed ? `${player.score} fish · out` : `${player.score} fish`;
  }

  constructor(host, { onAction = () => {} } = {}) {
    this.onAction = onAction;
    this.selected = null;
    this.svg = el("svg", { role: "group", "aria-label": "Fish board", "data-testid": "board", class: "board fish-board" });
    this.layer = el("g", {}, this.svg);
    this.taps = new TapAreas(this.svg, R * 0.6);
    this.hint = document.createElement("p");
    this.hint.className = "hint board-hint";
    this.hint.setAttribute("data-testid", "board-hint");
    host.replaceChildren(this.svg, this.hint);
  }

  render({ view, legal = [], me = null }) {
    if (!view) return;
    const { rows, columns, fish } = view;
    const width = PAD * 2 + W * (columns + 0.5);
    const height = PAD * 2 + 2 * R + DY * (rows - 1);
    this.svg.setAttribute("viewBox", `0 0 ${width.toFixed(1)} ${height.toFixed(1)}`);
    this.svg.setAttribute("data-legal", JSON.stringify(legal));
    const { places, moves } = indexFish(legal);
    if (this.selected && !moves.has(this.selected)) this.selected = null;
    const targets = this.selected ? moves.get(this.selected) : new Map();
    const owners = new Map();
    for (const player of view.players) {
      for (const p of player.penguins ?? []) if (p) owners.set(`${p[0]},${p[1]}`, player.id);
    }

    const layer = el("g");
    this.taps.begin(layer);
    for (let y = 0; y < rows; y++) {
      for (let x = 0; x < columns; x++) {
        const count = fish[y][x];
        const key = `${x},${y}`;
        const [cx, cy] = centre(x, y);
        if (!count) {
          el("polygon", { points: hexPoints(cx, cy), class: "hole", "data-testid": `tile-${x}-${y}`, "data-fish": 0 }, layer);
          continue;
        }
        const classes = ["tile"];
        const place = places.get(key);
        const target = targets.get(key);
        if (place || target) classes.push("legal");
        const tile = el("g", { class: classes.join(" "), "data-testid": `tile-${x}-${y}`, "data-fish": count }, layer);
        el("polygon", { points: hexPoints(cx, cy), class: "hex" }, tile);
        for (let i = 0; i < count; i++) {
          const angle = (2 * Math.PI * i) / count - Math.PI / 2;
          const spread = 19;
          el("ellipse", { cx: cx + spread * Math.cos(angle), cy: cy + spread * Math.sin(angle), rx: 6.5, ry: 3.6, class: "fish" }, tile);
        }
        if (!owners.has(key)) el("text", { x: cx, y: cy + 5, class: "fish-count" }, tile, String(count));
        if (place) activate(tile, `tile-${key}`, `Place a penguin on ${key} (${count} fish)`, () => this.onAction(place), this.taps, [cx, cy]);
        else if (target) activate(tile, `tile-${key}`, `Move there: ${key} (${count} fish)`, () => {
          this.selected = null;
          this.onAction(target);
        }, this.taps, [cx, cy]);
      }
    }
    for (const [key, owner] of owners) {
      const [x, y] = key.split(",").map(Number);
      const [cx, cy] = centre(x, y);
      const mine = owner === me;
      const movable = mine && moves.has(key);
      const classes = ["penguin"];
      if (movable) classes.push("movable");
      if (key === this.selected) classes.push("selected");
      const penguin = el("g", {
        class: classes.join(" "), "data-testid": `penguin-${x}-${y}`, "data-owner": owner,
        transform: `translate(${cx.toFixed(1)} ${cy.toFixed(1)})`,
      }, layer);
      el("title", {}, penguin, `${mine ? "Your" : `Player ${owner}'s`} penguin on ${key}`);
      el("polygon", { points: hexPoints(0, 0, R - 4), class: "hit" }, penguin);
      el("ellipse", { cx: 0, cy: 2, rx: 14, ry: 17, fill: FishBoard.seatColor(owner), class: "body" }, penguin);
      el("ellipse", { cx: 0, cy: 5, rx: 8, ry: 11, class: "belly" }, penguin);
      el("circle", { cx: -4, cy: -8, r: 2, class: "eye" }, penguin);
      el("circle", { cx: 4, cy: -8, r: 2, class: "eye" }, penguin);
      el("polygon", { points: "-3,-4 3,-4 0,0", class: "beak" }, penguin);
      if (movable) {
        activate(penguin, `penguin-${key}`, `Your penguin on ${key}: choose it`, () => {
          this.selected = this.selected === key ? null : key;
          this.render({ view, legal, me });
        }, this.taps, [cx, cy]);
      }
    }
    swapKeepingFocus(this.layer, layer);
    this.layer = layer;

    let hint = "";
    if (places.size) hint = "Place a penguin: click a glowing tile.";
    else if (this.selected) hint = "Now click a glowing tile to move there, or another penguin.";
    else if (moves.size) hint = "Click one of your penguins, then a tile it can reach in a straight line.";
    this.hint.textContent = hint;
    this.hint.hidden = !hint;
  }
}

export function fishColorName(localId) {
  return FISH_NAMES[(localId - 1) % FISH_NAMES.length];
}
