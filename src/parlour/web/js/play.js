// Parlour's accounts page (play.html): sign up and sign in, the lobby (players, open games,
// creating games and invitations), every game of the player, and the boards of the games the
// server computes. The protocol is docs/async-protocol.md; its client side is async-client.js,
// the boards are in boards/ (server-rules interface).
//
// How the page is built (play/): the server's catalogue of games and words (catalogue.js) is
// fetched first; one state object (model.js) is changed only by the updates, one function per
// server message (updates-lobby.js, updates-game.js), each saying which panels changed; each panel
// is a view (views/) drawn only when an update or a control names it. actions.js holds what the
// page does besides changing the state (requests, fetches, the connection), controls.js and
// create-form.js the buttons and forms.

import { AsyncClient, asyncUrl } from "./async-client.js";
import { Catalogue, fetchCatalogue } from "./play/catalogue.js";
import { createActions } from "./play/actions.js";
import { setupControls } from "./play/controls.js";
import { setupCreateForm } from "./play/create-form.js";
import { ALL, createState } from "./play/model.js";
import { showError } from "./play/notices.js";
import { GAME_UPDATES } from "./play/updates-game.js";
import { LOBBY_UPDATES } from "./play/updates-lobby.js";
import { QUICK_UPDATES } from "./play/updates-quick.js";
import { createChatView } from "./play/views/chat.js";
import { createGameView } from "./play/views/game.js";
import { createLeadersView } from "./play/views/leaders.js";
import { createLobbyView } from "./play/views/lobby.js";
import { createMyGamesView } from "./play/views/my-games.js";
import { createQuickView } from "./play/views/quick.js";
import { createClocksView } from "./play/views/seats.js";
import { setupSignIn, showSignIn } from "./play/views/session.js";
import { createStatsView } from "./play/views/stats.js";
import { createWatchView } from "./play/views/watch.js";

const UPDATES = { ...LOBBY_UPDATES, ...GAME_UPDATES };

function main() {
  // Everything is set up at once (the sign-in form must answer as soon as the page shows); the
  // catalogue comes when it comes, and the connection waits for it, so that every code has words.
  const catalogue = new Catalogue();
  const loaded = fetchCatalogue().then(
    (body) => catalogue.fill(body),
    // The page still signs in and plays what is already there; creating a game needs the list.
    (problem) => showError("The server's list of games did not load", `${problem.message}; reload the page`),
  );
  const client = new AsyncClient(asyncUrl());
  const state = createState(catalogue);
  const views = [];
  const fx = createActions(client, state, (panels) => {
    const changed = new Set(panels);
    for (const view of views) if (changed.has(view.panel)) view.render();
  });
  const form = setupCreateForm(state, fx);
  const clocks = createClocksView(state);
  const quick = createQuickView(state, fx);
  views.push(
    quick,
    createMyGamesView(state, fx),
    createLobbyView(state, fx, form.invite),
    createWatchView(state, fx),
    createGameView(state, fx, clocks),
    createChatView(state),
    createStatsView(state),
    createLeadersView(state),
    clocks,
  );
  const showLeaderGames = setupControls(state, fx);
  const start = (session) => loaded.then(() => fx.start(session));
  setupSignIn(start);

  // Quick play's updates are registered beside the others (a message may have one of each).
  for (const updates of [UPDATES, QUICK_UPDATES]) {
    for (const [type, update] of Object.entries(updates)) {
      client.on(type, (message) => {
        const changed = update(state, message, fx);
        // Most updates are immediate; those that inflate a lobby list finish later.
        if (changed instanceof Promise) changed.then(fx.draw);
        else fx.draw(changed);
      });
    }
  }
  setInterval(clocks.render, 250);
  // The time waited in quick play's queues runs on between the server's pushes.
  setInterval(() => {
    if (state.queues.size) quick.render();
  }, 1000);

  loaded.then(() => {
    form.showGames();
    quick.showGames();
    showLeaderGames();
    // Game names come from the catalogue: the lists drawn before it came are drawn again.
    fx.draw([...ALL, "leaders"]);
  });
  if (state.session?.token) start(state.session);
  else showSignIn(state);
}

main();
