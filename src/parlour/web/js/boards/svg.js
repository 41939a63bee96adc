// SVG helpers shared by the boards.

export const NS = "http://www.w3.org/2000/svg";

export function el(name, attrs = {}, parent = null, text = undefined) {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(key, String(value));
  }
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

/** Clickable, and reachable with the keyboard (Tab, then Enter or Space). With `taps` (a
 * TapAreas) the click is the board's: a tap area of finger size centred on `at` ([x, y]). */
export function activate(node, focusKey, label, handler, taps = null, at = null) {
  node.setAttribute("tabindex", "0");
  node.setAttribute("role", "button");
  node.setAttribute("data-focus", focusKey);
  if (label) node.setAttribute("aria-label", label);
  node.classList.add("active");
  if (taps) taps.add(focusKey, handler, at);
  else node.addEventListener("click", handler);
  node.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      handler();
    }
  });
}

/** Replace `old` by `next`, keeping the keyboard focus on the element with the same data-focus. */
export function swapKeepingFocus(old, next) {
  const focused = old.contains(document.activeElement) ? document.activeElement.getAttribute("data-focus") : null;
  old.replaceWith(next);
  if (focused) next.querySelector(`[data-focus="${CSS.escape(focused)}"]`)?.focus();
}

/** A finger needs about 44 CSS pixels (WCAG 2.5.5). */
export const TAP_PX = 44;

/**
 * Finger-sized tap areas for a board's active things. A phone draws a board some 350 px wide, where
 * a square or pawn is 20-35 px: each active thing gets a circle of TAP_PX across at the board's
 * drawn size, and a click or tap anywhere on the board goes to the active thing it is on, else to
 * the nearest one whose circle it falls in (neighbouring circles overlap; the nearest is meant).
 * The circles are drawn transparent under everything (data-hit-for names the thing they serve).
 */
export class TapAreas {
  constructor(svg, minRadius) {
    this.svg = svg;
    this.min = minRadius;
    this.active = [];
    this.handlers = new Map();
    this.group = null;
    svg.addEventListener("click", (event) => this.tap(event));
    // The areas follow the drawn size (a phone turned, a window resized).
    if (typeof ResizeObserver !== "undefined") new ResizeObserver(() => this.resize()).observe(svg);
  }

  /** The radius of a tap area in board units at the board's drawn size. */
  radius() {
    const width = this.svg.getBoundingClientRect().width;
    const box = this.svg.viewBox.baseVal;
    if (!width || !box || !box.width) return this.min;
    return Math.max(this.min, (TAP_PX / 2) * (box.width / width) + 0.5);
  }

  /** Start over for a new drawing: the areas go first into `layer`, under everything. */
  begin(layer) {
    this.active = [];
    this.handlers = new Map();
    this.group = el("g", { class: "hits" });
    layer.prepend(this.group);
  }

  add(focusKey, handler, at) {
    this.handlers.set(focusKey, handler);
    if (!at || !this.group) return;
    const [x, y] = at;
    this.active.push([x, y, handler]);
    el("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: this.radius().toFixed(1), class: "hit", fill: "transparent", "data-hit-for": focusKey }, this.group);
  }

  resize() {
    const r = this.radius().toFixed(1);
    for (const hit of this.group?.children ?? []) hit.setAttribute("r", r);
  }

  tap(event) {
    const own = event.target.closest?.("[data-focus]");
    const handler = own ? this.handlers.get(own.getAttribute("data-focus")) : null;
    if (handler) {
      handler();
      return;
    }
    const matrix = this.svg.getScreenCTM();
    if (!matrix || !this.active.length) return;
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
    let best = null;
    let distance = Infinity;
    for (const [x, y, candidate] of this.active) {
      const d = Math.hypot(point.x - x, point.y - y);
      if (d < distance) [best, distance] = [candidate, d];
    }
    if (best && distance <= this.radius()) best();
  }
}
