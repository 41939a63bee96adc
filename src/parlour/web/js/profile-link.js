// A player's name as a link to their profile page (profile.html?name=...), in a new tab so that
// the page it is on (a game, the lobby) stays where it was.

import { node } from "./dom.js";

export function profileHref(name) {
  return `profile.html?name=${encodeURIComponent(name)}`;
}

export function profileLink(name, attrs = {}) {
  return node("a", { href: profileHref(name), target: "_blank", rel: "noopener", class: "profile-link", title: `${name}'s profile`, ...attrs }, name);
}
