// Quick play's messages (Parlour extensions; docs/async.md "Quick play"): the queues the player
// waits in, as the server last said (QuickPlayStatusRequest), and the game a queue found
// (QuickPlayMatchedRequest). Registered beside the other updates (play.js), one function per
// message type, each returning the panels it changed.

/** The key of a queue: what is played, by how many, rated or not. */
export function queueKey(q) {
  return `${q.game_type}:${q.seats}:${q.ranked ? "ranked" : "casual"}`;
}

export const QUICK_UPDATES = {
  QuickPlayStatusRequest(state, m, fx) {
    if (m.ended === "SERVER_STOPPING") {
      // Queues are not kept across a restart: the page queues again once it is signed in again
      // (AsyncConnectedRequest below), from the queues it still shows.
      fx.notice("The server is restarting: you will be put back in your queues once reconnected.");
      return ["quick"];
    }
    if (m.ended === "TOO_MANY_GAMES") fx.notice("You left quick play: you are in as many games as the server allows.");
    const now = performance.now();
    state.queues = new Map((m.queues ?? []).map((q) => [queueKey(q), { ...q, at: now }]));
    for (const key of state.quickJoins.keys()) if (!state.queues.has(key)) state.quickJoins.delete(key);
    return ["quick"];
  },
  QuickPlayMatchedRequest(state, m, fx) {
    state.queues = new Map();
    state.quickJoins.clear();
    const robots = m.robots ? ` (with ${m.robots} robot${m.robots > 1 ? "s" : ""})` : "";
    fx.notice(`Quick play found a game of ${state.catalogue.name(m.game_type) ?? m.game_type}${robots}.`);
    return [...new Set(["quick", ...fx.select(m.game_id)])];
  },
  AsyncConnectedRequest(state, _m, fx) {
    // A new connection waits in no queue (the server forgets them with the connection that made
    // them, and across restarts): those the page still shows are joined again.
    const again = [...state.queues.values()];
    state.queues = new Map();
    for (const q of again) {
      const fields = state.quickJoins.get(queueKey(q)) ?? { game_type: q.game_type, seats: q.seats, ranked: Boolean(q.ranked) };
      // A connection that replaced one the server had not seen close yet keeps its queues:
      // that answer (ALREADY_QUEUED) is not shown, and the next push shows them.
      fx.send("QuickPlayJoinRequest", fields, { kind: "requeue" });
    }
    return ["quick"];
  },
};
