// The server's statistics line under the lobby (AskServerStatisticsRequest, pushed when they change).

export function createStatsView(state) {
  const line = document.getElementById("stats");
  function render() {
    const s = state.stats;
    line.textContent = s ? `On the server: ${s.connected_players} connected of ${s.players} players, ${s.hosted_games} games.` : "";
  }
  return { panel: "stats", render };
}
