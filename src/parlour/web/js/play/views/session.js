// The header and the sign-in panel: who is signed in, the connection's state, and the form that
// creates accounts and signs in (over HTTP, async-client.js) before the websocket opens.

import { createAccount, signIn } from "../../async-client.js";

const $ = (id) => document.getElementById(id);

export function setPill(text, cls = "") {
  $("connection").textContent = text;
  $("connection").className = `pill ${cls}`.trim();
}

/** The sign-in form in place of the games, with `message` (why) when there is one. */
export function showSignIn(state, message = "") {
  $("signin").hidden = false;
  $("app").hidden = true;
  $("sign-out").hidden = true;
  $("who").textContent = "";
  setPill("not signed in");
  const error = $("signin-error");
  error.textContent = message;
  error.hidden = !message;
  if (state.session?.name && !$("account-name").value) $("account-name").value = state.session.name;
  ($("account-name").value ? $("account-password") : $("account-name")).focus();
}

/** The games in place of the sign-in form, once the server accepted the session. */
export function showApp(state) {
  $("signin").hidden = true;
  $("app").hidden = false;
  $("sign-out").hidden = false;
  $("who").textContent = state.me.name;
  setPill("connected", "ok");
}

/** The form's two buttons: sign in, or create the account then sign in; `start` gets the session. */
export function setupSignIn(start) {
  async function account(create) {
    const name = $("account-name").value.trim();
    const password = $("account-password").value;
    const error = $("signin-error");
    error.hidden = true;
    if (!name || password.length < 8) {
      error.textContent = !name ? "Type a name." : "Passwords have 8 characters or more.";
      error.hidden = false;
      return;
    }
    for (const button of [$("signin-button"), $("signup-button")]) button.disabled = true;
    try {
      if (create) await createAccount(name, password);
      const answer = await signIn(name, password);
      $("account-password").value = "";
      start({ name: answer.name, token: answer.token, player_id: answer.player_id });
    } catch (problem) {
      error.textContent = problem.message;
      error.hidden = false;
    } finally {
      for (const button of [$("signin-button"), $("signup-button")]) button.disabled = false;
    }
  }
  $("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    account(false);
  });
  $("signup-button").addEventListener("click", () => {
    if ($("signin-form").reportValidity()) account(true);
  });
}
