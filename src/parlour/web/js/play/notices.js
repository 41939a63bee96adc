// The page's two message boxes: errors (the last four, each dismissable) and one notice.

import { node } from "../dom.js";

const $ = (id) => document.getElementById(id);

export function showError(title, comment = "", code = "") {
  const box = $("errors");
  const item = node("div", { class: "error", "data-testid": "error", "data-code": code },
    node("span", {}, node("strong", {}, title), comment ? `: ${comment}` : ""),
    node("button", { type: "button", class: "dismiss", "aria-label": "Dismiss", title: "Dismiss", "data-testid": "dismiss-error", onclick: () => item.remove() }, "×"));
  box.prepend(item);
  while (box.children.length > 4) box.lastChild.remove();
}

export function showNotice(text) {
  const box = $("notice");
  box.replaceChildren(node("span", {}, text),
    node("button", { type: "button", class: "dismiss", "aria-label": "Dismiss", title: "Dismiss", onclick: () => { box.hidden = true; } }, "×"));
  box.hidden = false;
}
