"""The accounts page (play.html) by its modules (js/play/): it takes the games, their seats and its
error words from the server (GET /api/async/catalogue); each server message's update changes the
state and names the panels it changed, and only those are drawn."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from parlour.protocols.async_ws.game.rules import RULES, seat_range

from .browser_steps import tid
from .play_steps import no_errors, open_create_form, sign_up


def options(page: Any, testid: str) -> list[list[str]]:
    found: list[list[str]] = page.eval_on_selector_all(
        f"{tid(testid)} option", "(all) => all.map((o) => [o.value, o.textContent])"
    )
    return found


def test_the_create_form_offers_the_servers_games_and_seats(new_page: Any, url: str) -> None:
    with urllib.request.urlopen(f"{url}api/async/catalogue", timeout=5) as reply:
        catalogue = json.load(reply)
    page = new_page()
    sign_up(page, url, "cata")
    names = [[game["rules"], game["name"]] for game in catalogue["games"]]
    assert [rules for rules, _ in names] == list(RULES)
    assert options(page, "create-rules") == names
    assert options(page, "leaders-game") == names

    # An open game's seats run over the plugin's range, whichever game is chosen.
    open_create_form(page)
    page.check(tid("create-how-open"))
    for rules in RULES:
        page.select_option(tid("create-rules"), rules)
        low, high = seat_range(rules)
        assert [value for value, _ in options(page, "create-seats")] == [str(n) for n in range(low, high + 1)]

    # Inviting more than the game seats is refused in the page, with the server's range and name.
    page.check(tid("create-how-invite"))
    page.select_option(tid("create-rules"), "fish")
    page.fill(tid("create-invite"), "nobody-here")
    page.click(tid("create"))
    page.locator(tid("error"), has_text="nobody-here is not in the lobby").wait_for()
    page.locator(tid("dismiss-error")).click()
    other = new_page()
    sign_up(other, url, "catb")
    page.locator(tid("lobby-player-catb")).wait_for()
    page.fill(tid("create-invite"), "catb")
    page.select_option(tid("create-robots"), "3")
    page.click(tid("create"))
    low, high = seat_range("fish")
    page.locator(
        tid("error"), has_text=f"Fish is played by {low} to {high} players; with you, this makes 5"
    ).wait_for()
    page.locator(tid("dismiss-error")).click()
    no_errors(page, other)


def test_a_message_draws_only_the_panels_it_changed(new_page: Any, url: str) -> None:
    ann = new_page()
    sign_up(ann, url, "pann")
    # The statistics answer a request sent after the one for ann's games: those are drawn by now.
    ann.locator(tid("stats"), has_text="On the server").wait_for()
    ann.locator(f"{tid('my-games')} .empty").wait_for()
    # Mark the drawn lists: a list drawn again loses its mark (its items are new elements).
    lists = '["my-games", "lobby-players"]'
    ann.evaluate(
        f"{lists}.forEach((id) => {{ document.querySelector(`[data-testid='${{id}}'] li`).dataset.mark = 'old'; }})"
    )
    bob = new_page()
    sign_up(bob, url, "pbob")
    # bob in the lobby changes ann's list of players, not her list of games.
    ann.locator(tid("lobby-player-pbob")).wait_for()
    marked = ann.evaluate(
        f"{lists}.map((id) => document.querySelector(`[data-testid='${{id}}'] li`).dataset.mark ?? null)"
    )
    assert marked == ["old", None]
    no_errors(ann, bob)


def test_the_page_signs_in_without_the_catalogue(new_page: Any, url: str) -> None:
    page = new_page(expected_errors="503")
    page.route("**/api/async/catalogue", lambda route: route.fulfill(status=503, body="{}"))
    sign_up(page, url, "nocat")
    page.locator(tid("error"), has_text="The server's list of games did not load").wait_for()
    assert options(page, "create-rules") == []
    open_create_form(page)
    page.click(tid("create"))
    page.locator(tid("error"), has_text="No game chosen").wait_for()


def test_each_update_names_the_panels_it_changed(new_page: Any, url: str) -> None:
    """The updates (js/play/updates-*.js) on hand-made messages, with a recording stand-in for the
    page's actions."""
    page = new_page()
    page.goto(f"{url}play.html")
    page.wait_for_selector(tid("signin"))
    result = page.evaluate(
        """async () => {
            const load = (path) => import(new URL(`js/play/${path}`, location.href));
            const { Catalogue } = await load('catalogue.js');
            const { createState, game } = await load('model.js');
            const { GAME_UPDATES } = await load('updates-game.js');
            const { LOBBY_UPDATES } = await load('updates-lobby.js');
            const catalogue = new Catalogue();
            catalogue.fill({games: [{rules: 'fish', name: 'Fish', min_seats: 2, max_seats: 4}],
                            join_denied: {GAME_FULL: 'it is full'}, errors: {NOT_YOUR_TURN: 'It is not your turn'}});
            const state = createState(catalogue);
            state.me = {player_id: 7, name: 'ann'};
            const done = [];
            const fx = {
                send: (type) => { done.push(`send ${type}`); return 'r1'; },
                refresh: (id) => done.push(`refresh ${id}`),
                error: (title, comment, code) => done.push(`error ${title}: ${comment} (${code})`),
                notice: (text) => done.push(`notice ${text}`),
                select: (id) => { state.current = id; done.push(`select ${id}`); return ['all']; },
                forget: (id) => { state.games.delete(id); return ['all']; },
                loadLeaders: () => done.push('leaders'),
            };
            const U = {...LOBBY_UPDATES, ...GAME_UPDATES};
            const open = game(state, 1);
            open.players = [{local_id: 1, player_id: 7, name: 'ann', kind: 'HUMAN'}, {local_id: 2, player_id: 8, name: 'bob', kind: 'HUMAN'}];
            open.config = {rules: 'fish', game_type: 'fish', clock_seconds: 60};
            const other = game(state, 2);
            state.current = 1;
            const clock = {player_id: 1, remaining_seconds: 50, armed: true};
            // The lobby lists as deltas (a Parlour extension) on top of the whole lists.
            state.players = [{player_id: 8, name: 'bob', presence: 'ONLINE'}, {player_id: 9, name: 'cid', presence: 'ONLINE'}];
            state.open = [{game_id: 4, configuration: {rules: 'fish'}, players: []}];
            const delta = await U.LobbyListDeltaRequest(state, {
                players: [{player_id: 7, name: 'ann', presence: 'ONLINE'}, {player_id: 9, name: 'cid', presence: 'IN_GAME'}],
                left: [8], games: [{game_id: 6, configuration: {rules: 'fish'}, players: []}], closed: [4],
                player_count: 2, game_count: 1}, fx);
            const deltaPlayers = state.players.map((p) => `${p.player_id} ${p.presence}`);
            const deltaGames = state.open.map((g) => g.game_id);
            const playersOnly = await U.LobbyListDeltaRequest(state, {left: [9], player_count: 1, game_count: 1}, fx);
            // Sizes that do not match what the page holds: it asks for the whole lists again.
            const drifted = await U.LobbyListDeltaRequest(state, {players: [], player_count: 5, game_count: 1}, fx);
            return {
                delta, deltaPlayers, deltaGames, playersOnly, drifted,
                stats: U.ServerStatisticsRequest(state, {players: 3}, fx),
                clocks: U.ClocksStatusRequest(state, {game_id: 1, clocks: [clock]}, fx),
                turnHere: U.ActionRequiredRequest(state, {game_id: 1, state: '{"turn": 1}', player_id: 1, turn_index: 3, legal_actions: ['place 0,0'], player_clock: clock}, fx),
                turnElsewhere: U.GameStateUpdatedRequest(state, {game_id: 2, state: '{"turn": 2}', turn_index: 4}, fx),
                chatElsewhere: U.ClientChatRequest(state, {game_id: 2, sender: 8, text: 'hi'}, fx),
                chatUnknownGame: U.ClientChatRequest(state, {game_id: 99, sender: 8, text: 'hi'}, fx),
                lobbyChat: U.ClientChatRequest(state, {game_id: 0, sender: 8, text: 'hello'}, fx),
                watch: U.ObservableGameListRequest(state, {games: []}, fx),
                forfeitUnknown: U.GameForfeitedRequest(state, {game_id: 99, player_id: 2}, fx),
                forfeit: U.GameForfeitedRequest(state, {game_id: 1, player_id: 2}, fx),
                outcome: U.GameOutcomeRequest(state, {game_id: 2, outcome: []}, fx),
                denied: U.LobbyJoinDeniedRequest(state, {game_id: 3, cause: 'GAME_FULL'}, fx),
                refused: U.ErrorRequest(state, {code: 'NOT_YOUR_TURN', message: 'wait'}, fx),
                unworded: U.ErrorRequest(state, {code: 'SOMETHING_NEW', message: 'new'}, fx),
                created: U.LobbyGameCreatedRequest(state, {game_id: 5, configuration: {rules: 'fish'}}, fx),
                seat: open.players[1].state, legal: open.legal, turnIndex: open.turnIndex,
                chat: other.chat.length, done,
            };
        }"""
    )
    panels = {"games", "game", "chat"}
    assert result["stats"] == ["stats"]
    assert result["clocks"] == ["clocks"]
    assert set(result["turnHere"]) == panels  # the open game
    assert result["turnElsewhere"] == ["games"]  # another game: only the list of games
    assert result["chatElsewhere"] == [] and result["chat"] == 1  # kept, drawn when that game opens
    assert result["chatUnknownGame"] == []
    assert result["lobbyChat"] == ["chat"]
    assert result["watch"] == ["watch"]
    assert result["forfeitUnknown"] == []
    assert set(result["forfeit"]) == panels and result["seat"] == "FORFEITED"
    assert result["outcome"] == ["games", "leaders"]
    assert result["denied"] == [] and result["refused"] == [] and result["unworded"] == []
    assert result["created"] == ["all"]
    assert result["legal"] == ["place 0,0"] and result["turnIndex"] == 3
    assert set(result["delta"]) == {"lobby", "chat", "games", "game"}
    assert result["deltaPlayers"] == ["7 ONLINE", "9 IN_GAME"] and result["deltaGames"] == [6]
    assert result["playersOnly"] == ["lobby", "chat"] and result["drifted"] == []
    assert result["done"] == [
        "send GetLobbyListsRequest",
        "leaders",
        "error Cannot join: it is full. (GAME_FULL)",
        "error It is not your turn: wait (NOT_YOUR_TURN)",
        "error SOMETHING_NEW: new (SOMETHING_NEW)",
        "select 5",
    ]
