// How the page words a game's settings, clocks and moves (pure functions of their arguments).

export function clockText(config) {
  if (!config || !config.clock_seconds) return "no clock";
  const base = config.clock_seconds >= 86400 ? `${config.clock_seconds / 86400} day` : `${Math.round(config.clock_seconds / 60)} min`;
  return config.clock_increment_seconds ? `${base} + ${config.clock_increment_seconds} s a move` : base;
}

export function formatClock(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** An action of rules.py's notation in words ("place 3,4" -> "placed a penguin on 3,4"). */
export function describeAction(action) {
  let m = /^place (\d+,\d+)$/.exec(action);
  if (m) return `placed a penguin on ${m[1]}`;
  m = /^move (\d+,\d+) (\d+,\d+)$/.exec(action);
  if (m) return `moved a penguin ${m[1]} → ${m[2]}`;
  m = /^tile (\d+) rotation (\d+) at (\d+,\d+)(?: port ([A-H]))?$/.exec(action);
  if (m) return `placed tile ${m[1]} turned ${m[2]}° on ${m[3]}${m[4] ? `, entering at ${m[4]}` : ""}`;
  m = /^remove (\d+)$/.exec(action);
  if (m) return "left the game: taken out of play";
  m = /^forfeit (\w+)$/.exec(action);
  if (m) return `had no move and discarded ${m[1]}`;
  m = /^play (\w+): (.*)$/.exec(action);
  if (m) return `played ${m[1]}: ${m[2].replaceAll("->", " → ")}`;
  return action.replace("->", " → ");
}

/** "+24", "-12", "±0", or `none` when there is no change to show (points of the shown rating). */
export function ratingChange(change, none = "") {
  if (change === null || change === undefined) return none;
  return change > 0 ? `+${change}` : change < 0 ? String(change) : "±0";
}

/** A rating as shown (docs/ratings.md): "1520", or "1520?" while provisional. */
export function ratingText(shown) {
  return shown ? `${shown.rating}${shown.provisional ? "?" : ""}` : "";
}

export function changeClass(change) {
  return change > 0 ? "up" : change < 0 ? "down" : "";
}
