// SVG helpers shared by the boards of the accounts page.

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

/** Clickable, and reachable with the keyboard (Tab, then Enter or Space). */
export function activate(node, focusKey, label, handler) {
  node.setAttribute("tabindex", "0");
  node.setAttribute("role", "button");
  node.setAttribute("data-focus", focusKey);
  node.setAttribute("aria-label", label);
  node.classList.add("active");
  node.addEventListener("click", handler);
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
