// The Apologies board in SVG: 60 squares round a 16 x 16 grid, each colour's start, slides,
// safe zone and home (apologies-rules.md section 2). Boards of other games can sit beside this
// module behind the same two functions: drawBoard(svg, state, handlers) and positionKey(pawn).

const NS = "http://www.w3.org/2000/svg";
const CELL = 20;
const COLORS = { RED: "#d33", YELLOW: "#d9a400", GREEN: "#2a9d48", BLUE: "#2a6fd6" };
const CIRCLE = { RED: 4, YELLOW: 34, GREEN: 49, BLUE: 19 };
const SLIDES = { RED: [[1, 4], [9, 13]], BLUE: [[16, 19], [24, 28]], YELLOW: [[31, 34], [39, 43]], GREEN: [[46, 49], [54, 58]] };

// Square s (0..59) -> grid cell, clockwise from the top-left corner.
export function squareCell(s) {
  if (s <= 15) return [s, 0];
  if (s <= 30) return [15, s - 15];
  if (s <= 45) return [15 - (s - 30), 15];
  return [0, 15 - (s - 45)];
}

// The direction pointing into the board from a square's side.
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

// Where a pawn is drawn: a square, its colour's safe zone or home, or its start area.
export function pawnCell(pawn) {
  const turn = (CIRCLE[pawn.color] + 58) % 60;
  const offset = [[-0.25, -0.25], [0.25, -0.25], [-0.25, 0.25], [0.25, 0.25]][Number(pawn.id)];
  if (pawn.square !== null) return squareCell(pawn.square);
  if (pawn.safe !== null) return along(turn, pawn.safe + 1);
  if (pawn.home) {
    const [x, y] = along(turn, 6.5);
    return [x + offset[0] * 1.6, y + offset[1] * 1.6];
  }
  const [x, y] = along(CIRCLE[pawn.color], 2.5);
  return [x + offset[0] * 1.6, y + offset[1] * 1.6];
}

export function positionKey(pawn) {
  if (pawn.start) return "start";
  if (pawn.home) return "home";
  if (pawn.safe !== null) return `safe ${pawn.safe}`;
  return `square ${pawn.square}`;
}

function el(name, attrs, parent) {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  parent.appendChild(node);
  return node;
}

function centre([x, y]) {
  return [x * CELL + CELL / 2, y * CELL + CELL / 2];
}

// Draw the board and pawns. `movable` is a set of "COLOR-id" pawn names that can move,
// `targets` a list of {pawn, key} destinations for the selected pawn.
export function drawBoard(svg, pawns, { movable, selected, targets, onPawn, onTarget }) {
  svg.replaceChildren();
  el("rect", { x: 0, y: 0, width: 320, height: 320, fill: "#f6f1e4" }, svg);
  for (let s = 0; s < 60; s++) {
    const [x, y] = squareCell(s);
    el("rect", { x: x * CELL + 1, y: y * CELL + 1, width: CELL - 2, height: CELL - 2, rx: 3, fill: "#fff", stroke: "#bbb" }, svg);
  }
  for (const [color, slides] of Object.entries(SLIDES)) {
    for (const [from, to] of slides) {
      const [x1, y1] = centre(squareCell(from));
      const [x2, y2] = centre(squareCell(to));
      el("line", { x1, y1, x2, y2, stroke: COLORS[color], "stroke-width": 5, opacity: 0.45, "stroke-linecap": "round" }, svg);
    }
    const turn = (CIRCLE[color] + 58) % 60;
    for (let k = 1; k <= 5; k++) {
      const [x, y] = along(turn, k);
      el("rect", { x: x * CELL + 2, y: y * CELL + 2, width: CELL - 4, height: CELL - 4, fill: COLORS[color], opacity: 0.25 }, svg);
    }
    const [hx, hy] = centre(along(turn, 6.5));
    el("circle", { cx: hx, cy: hy, r: 17, fill: COLORS[color], opacity: 0.2, stroke: COLORS[color] }, svg);
    const [sx, sy] = centre(along(CIRCLE[color], 2.5));
    el("circle", { cx: sx, cy: sy, r: 17, fill: "none", stroke: COLORS[color], "stroke-width": 2 }, svg);
  }
  for (const pawn of pawns) {
    const name = `${pawn.color}-${pawn.id}`;
    const [x, y] = centre(pawnCell(pawn));
    const dot = el("circle", {
      cx: x, cy: y, r: 6.5, fill: COLORS[pawn.color], stroke: name === selected ? "#000" : "#fff",
      "stroke-width": name === selected ? 3 : 1.5, "data-testid": `pawn-${name}`,
      class: movable.has(name) ? "pawn movable" : "pawn",
    }, svg);
    if (movable.has(name)) dot.addEventListener("click", () => onPawn(name));
  }
  // Destinations last, on top: a target may be an opponent's square (a bump).
  for (const target of targets) {
    const [x, y] = centre(pawnCell({ ...target.position, color: target.color, id: target.id }));
    const ring = el("circle", { cx: x, cy: y, r: 9, fill: "#000", "fill-opacity": 0.3, stroke: "#000", class: "target", "data-testid": "target" }, svg);
    ring.addEventListener("click", () => onTarget(target));
  }
}
