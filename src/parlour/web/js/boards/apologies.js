// The Apologies board in SVG: 60 squares clockwise round a 16 x 16 grid from the top-left corner,
// and for each colour its start area next to its circle, a 5-square safe zone turning in at its
// turn square, home at the end of the safe zone and two slides.
// Implements the board interface of ./index.js: new ApologiesBoard(host, {onPawn, onTarget}),
// render(scene).

import { cardFace, pawnKey, positionKey, titleCase } from "../apologies-moves.js";
import { TapAreas, activate, el, swapKeepingFocus } from "./svg.js";
const CELL = 40;
const SIZE = 16 * CELL;

export const COLORS = { RED: "#d8343a", YELLOW: "#e0a800", GREEN: "#23985a", BLUE: "#2f6fd8" };
const TINTS = { RED: "#f8d7d8", YELLOW: "#fbefc4", GREEN: "#d2efdd", BLUE: "#d6e3fa" };

/** Each colour's circle (leave start to), turn square (-> safe 0), short and long slides. */
export const GEOMETRY = {
  RED: { circle: 4, turn: 2, slides: [[1, 4], [9, 13]] },
  BLUE: { circle: 19, turn: 17, slides: [[16, 19], [24, 28]] },
  YELLOW: { circle: 34, turn: 32, slides: [[31, 34], [39, 43]] },
  GREEN: { circle: 49, turn: 47, slides: [[46, 49], [54, 58]] },
};

/** Square s (0..59) -> [column, row]: top row left to right, right column down, bottom row
 * right to left, left column up. */
export function squareCell(s) {
  if (s <= 15) return [s, 0];
  if (s <= 30) return [15, s - 15];
  if (s <= 45) return [45 - s, 15];
  return [0, 60 - s];
}

/** The unit step from square s's side of the board towards the middle. */
function inward(s) {
  if (s < 15) return [0, 1];
  if (s < 30) return [-1, 0];
  if (s < 45) return [0, -1];
  return [1, 0];
}

function along(s, steps) {
  const [x, y] = squareCell(s);
  const [dx, dy] = inward(s);
  return [x + dx * steps, y + dy * steps];
}

/** Safe square k (0..4) of a colour: a line of cells straight in from its turn square. */
export function safeCell(color, k) {
  return along(GEOMETRY[color].turn, k + 1);
}

export function homeCell(color) {
  return along(GEOMETRY[color].turn, 6.6);
}

export function startCell(color) {
  return along(GEOMETRY[color].circle, 2.6);
}

const SLOTS = [[-0.4, -0.4], [0.4, -0.4], [-0.4, 0.4], [0.4, 0.4]];

/** Where a pawn is drawn, in grid cells (fractional): its square or safe square, or its own slot
 * in its colour's start or home circle. */
export function pawnCell(pawn) {
  if (pawn.start || pawn.home) {
    const [x, y] = pawn.start ? startCell(pawn.color) : homeCell(pawn.color);
    const [ox, oy] = SLOTS[Number(pawn.id) % 4];
    return [x + ox, y + oy];
  }
  if (pawn.safe !== null && pawn.safe !== undefined) return safeCell(pawn.color, pawn.safe);
  return squareCell(pawn.square);
}

function px([x, y]) {
  return [x * CELL + CELL / 2, y * CELL + CELL / 2];
}

/** A finger-sized tap area is never smaller than a pawn's own circle and its margin. */
const MIN_HIT = 22;

/** Area labels in darker shades of the colours: text must stay readable (contrast >= 4.5:1). */
const LABEL_INK = { RED: "#b3262c", YELLOW: "#7d5a00", GREEN: "#17693d", BLUE: "#2456a8" };

function drawStatic(g) {
  el("rect", { x: 0, y: 0, width: SIZE, height: SIZE, rx: 18, fill: "#f4ecd8" }, g);
  el("rect", { x: CELL + 6, y: CELL + 6, width: SIZE - 2 * CELL - 12, height: SIZE - 2 * CELL - 12, rx: 12, fill: "#fbf7ec", stroke: "#e3d6b8" }, g);
  for (let s = 0; s < 60; s++) {
    const [x, y] = squareCell(s);
    el("rect", { x: x * CELL + 2, y: y * CELL + 2, width: CELL - 4, height: CELL - 4, rx: 5, fill: "#fffdf7", stroke: "#c9b991", "data-square": s }, g);
    el("text", { x: x * CELL + 5, y: y * CELL + 12, class: "square-number" }, g, String(s));
  }
  for (const [color, geo] of Object.entries(GEOMETRY)) {
    const ink = COLORS[color];
    for (let k = 0; k < 5; k++) {
      const [x, y] = safeCell(color, k);
      el("rect", { x: x * CELL + 3, y: y * CELL + 3, width: CELL - 6, height: CELL - 6, rx: 4, fill: TINTS[color], stroke: ink, "stroke-width": 1.5, "data-safe": `${color}-${k}` }, g);
    }
    const [hx, hy] = px(homeCell(color));
    el("circle", { cx: hx, cy: hy, r: CELL * 1.05, fill: TINTS[color], stroke: ink, "stroke-width": 3, "data-home": color }, g);
    // The label goes on the side of the circle away from the safe zone, which it would sit under.
    const below = inward(geo.turn)[1] >= 0;
    el("text", { x: hx, y: below ? hy + CELL * 1.05 + 13 : hy - CELL * 1.05 - 5, class: "area-label", fill: LABEL_INK[color], "data-label": `home-${color}` }, g, "HOME");
    const [sx, sy] = px(startCell(color));
    el("circle", { cx: sx, cy: sy, r: CELL * 1.05, fill: "#fffdf7", stroke: ink, "stroke-width": 3, "stroke-dasharray": "7 4", "data-start": color }, g);
    el("text", { x: sx, y: sy + CELL * 1.05 + 13, class: "area-label", fill: LABEL_INK[color], "data-label": `start-${color}` }, g, "START");
    for (const [from, to] of geo.slides) {
      const [x1, y1] = px(squareCell(from));
      const [x2, y2] = px(squareCell(to));
      el("line", { x1, y1, x2, y2, stroke: ink, "stroke-width": 11, "stroke-linecap": "round", opacity: 0.55, "data-slide": `${from}-${to}` }, g);
      // A triangle at the slide's start, pointing along it; a disc at its end.
      const dx = Math.sign(x2 - x1);
      const dy = Math.sign(y2 - y1);
      const tip = [x1 + dx * 12, y1 + dy * 12];
      const back = [x1 - dx * 10, y1 - dy * 10];
      const side = [-dy * 11, dx * 11];
      el("polygon", { points: `${tip} ${back[0] + side[0]},${back[1] + side[1]} ${back[0] - side[0]},${back[1] - side[1]}`, fill: ink }, g);
      el("circle", { cx: x2, cy: y2, r: 9, fill: ink }, g);
    }
  }
  el("text", { x: SIZE / 2, y: SIZE / 2 + 140, class: "board-title" }, g, "Apologies");
}

export class ApologiesBoard {
  static kind = "apologies";

  constructor(host, { onPawn = () => {}, onTarget = () => {} } = {}) {
    this.onPawn = onPawn;
    this.onTarget = onTarget;
    this.svg = el("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, role: "group", "aria-label": "Apologies board", "data-testid": "board", class: "board apologies" });
    drawStatic(el("g", { class: "static" }, this.svg));
    this.layer = el("g", { class: "dynamic" }, this.svg);
    this.taps = new TapAreas(this.svg, MIN_HIT);
    host.replaceChildren(this.svg);
  }

  /** scene: pawns (wire pawn objects), movable (Set of pawnKey, or Map pawnKey -> destination keys), selected (pawnKey or null),
   * targets ([{key, position}] for the selected pawn), card (CardType or null) and caption; marked (Set of pawnKey: pawns that
   * just moved), ghosts (pawn objects: where they came from, drawn hollow) and glide (true: marked pawns glide there from their ghost). */
  render({ pawns = [], movable = new Map(), selected = null, targets = [], card = null, caption = "", marked = new Set(), ghosts = [], glide = false }) {
    const layer = el("g", { class: "dynamic" });
    this.drawCard(layer, card, caption);
    const from = new Map();
    for (const ghost of ghosts) {
      const [x, y] = px(pawnCell(ghost));
      from.set(pawnKey(ghost), [x, y]);
      el("circle", { r: 13.5, cx: x, cy: y, class: "ghost", stroke: COLORS[ghost.color], "data-testid": `ghost-${pawnKey(ghost)}`, "data-position": positionKey(ghost) }, layer);
    }
    this.taps.begin(layer);
    // `movable` may map each pawn to its destinations' keys; they are kept on the pawn (data-targets).
    const destinations = movable instanceof Map ? movable : new Map([...movable].map((k) => [k, []]));
    // Pawns sharing a square (possible on servers that allow it) are drawn side by side.
    const seen = new Map();
    const gliding = [];
    for (const pawn of pawns) {
      const key = pawnKey(pawn);
      const where = positionKey(pawn);
      let [x, y] = px(pawnCell(pawn));
      if (!pawn.start && !pawn.home) {
        const n = seen.get(where) ?? 0;
        seen.set(where, n + 1);
        x += n * 9;
        y -= n * 9;
      }
      const classes = ["pawn"];
      if (movable.has(key)) classes.push("movable");
      if (key === selected) classes.push("selected");
      if (marked.has(key)) classes.push("moved");
      const group = el("g", { class: classes.join(" "), "data-testid": `pawn-${key}`, "data-position": where, "data-color": pawn.color, transform: `translate(${x} ${y})` }, layer);
      if (destinations.has(key)) group.setAttribute("data-targets", destinations.get(key).join(" "));
      el("title", {}, group, `${titleCase(pawn.color)}${pawn.id}: ${where.replace("-", " ")}`);
      el("circle", { r: 13.5, fill: COLORS[pawn.color], class: "body" }, group);
      el("text", { y: 5, class: "pawn-label" }, group, String(pawn.id));
      if (movable.has(key)) activate(group, `pawn-${key}`, null, () => this.onPawn(key), this.taps, [x, y]);
      if (glide && marked.has(key) && from.has(key)) gliding.push([group, from.get(key), [x, y]]);
    }
    // Destinations on top: a destination may hold an opponent about to be bumped.
    for (const target of targets) {
      const [x, y] = px(pawnCell(target.position));
      const cards = [...new Set((target.moves ?? []).map((m) => m.card))].join(" ");
      const ring = el("g", { class: "target", "data-testid": "target", "data-position": target.key, "data-cards": cards, transform: `translate(${x} ${y})` }, layer);
      el("title", {}, ring, `Move here (${target.key.replace("-", " ")})`);
      el("circle", { r: 19, class: "target-ring" }, ring);
      activate(ring, `target-${target.key}`, null, () => this.onTarget(target), this.taps, [x, y]);
    }
    // Redrawing must not steal the keyboard focus from a pawn or destination that is still there.
    swapKeepingFocus(this.layer, layer);
    this.layer = layer;
    // A move glides from where it was: the eye follows one pawn at a time.
    for (const [group, [x0, y0], [x1, y1]] of gliding) {
      group.animate([{ transform: `translate(${x0}px, ${y0}px)` }, { transform: `translate(${x1}px, ${y1}px)` }],
        { duration: 320, easing: "ease-out" });
    }
  }

  drawCard(layer, card, caption) {
    const cx = SIZE / 2;
    const cy = SIZE / 2 - 10;
    const g = el("g", { class: card ? "board-card" : "board-card empty", "data-testid": "board-card" }, layer);
    el("rect", { x: cx - 52, y: cy - 74, width: 104, height: 148, rx: 12, class: "card-face" }, g);
    el("text", { x: cx, y: cy + 20, class: "card-value" }, g, card ? cardFace(card) : "?");
    if (caption) el("text", { x: cx, y: cy + 102, class: "card-caption" }, g, caption);
  }
}
