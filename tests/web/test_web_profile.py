"""A player's profile (profile.html) against a real server with a store: opened from a
name on the leaderboard of the accounts page, with the rating the leaderboard shows, its history
drawn, the recent games with a replay that steps on the board, the record against the opponent
and the opponent's own profile one click away; an unknown name is said so. Shot on a laptop and
on a phone (build/screenshots/profile*.png)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from tests.asyncclient import configuration, new_player, play_first_legal_actions

from .browser_steps import screenshot, tid
from .conftest import PHONE
from .play_steps import sign_up


def ranked_fish_games(port: int, games: int) -> tuple[str, str, list[int]]:
    """``games`` ranked Fish games between two new accounts, played over /async by a script (each
    seat its first legal action): the names and the game ids."""

    async def main() -> tuple[str, str, list[int]]:
        ann, bob = await new_player(port, "pann"), await new_player(port, "pbob")
        ids: list[int] = []
        try:
            for _ in range(games):
                config = configuration(2, game_type="fish", rules="fish", ranked=True)
                await ann.client.send({"type": "LobbyCreateGameRequest", "configuration": config})
                game_id = (await ann.client.expect("LobbyGameCreatedRequest"))["game_id"]
                await bob.client.send({"type": "LobbyJoinGameRequest", "game_id": game_id})
                for player in (ann, bob):  # started: the join is not answered before
                    await player.client.expect("GameCreatedRequest", game_id=game_id)
                await play_first_legal_actions(ann, {1: ann, 2: bob}, game_id)
                for player in (ann, bob):
                    await player.client.expect("GameOutcomeRequest", game_id=game_id)
                ids.append(game_id)
        finally:
            for player in (ann, bob):
                await player.client.close()
        return ann.name, bob.name, ids

    # Playwright's sync API runs an event loop in this thread: the script runs in another.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main()).result()


def test_a_profile_opened_from_the_leaderboard(new_page: Any, stored_web_server: Any) -> None:
    url = stored_web_server.url
    ann, bob, games = ranked_fish_games(urlsplit(url).port or 80, 2)

    viewer = new_page()
    sign_up(viewer, url, "pviewer")
    viewer.select_option(tid("leaders-game"), "fish")
    row = viewer.locator(tid(f"leader-{ann}"))
    row.wait_for()
    shown = row.locator("td").nth(2).inner_text()
    assert shown.endswith("?"), shown  # two games: provisional
    with viewer.context.expect_page() as opened:
        viewer.click(tid(f"leader-name-{ann}"))
    profile = opened.value
    profile.locator(f"{tid('profile')}[data-loaded='true']").wait_for()
    assert profile.locator(tid("profile-name")).inner_text() == ann
    # The rating the leaderboard shows, and the games it counts.
    assert profile.locator(f"{tid('rating-fish')} td").nth(1).inner_text() == shown
    assert profile.locator(f"{tid('rating-fish')} td").nth(2).inner_text() == "2"
    # The history's chart is drawn (uPlot draws on a canvas).
    profile.locator(f"{tid('chart-fish')} canvas").first.wait_for()
    # The recent games, newest first, each with its opponent and rating change.
    listed = profile.locator(f"{tid('recent-games')} > li")
    assert [item.get_attribute("data-testid") for item in listed.all()] == [
        f"recent-{g}" for g in reversed(games)
    ]
    assert bob in profile.locator(tid(f"recent-{games[-1]}")).inner_text()
    # The record against the opponent: two games, each won or lost or drawn.
    cells = profile.locator(f"{tid(f'opponent-{bob}')} td").all_inner_texts()
    assert cells[0] == bob and sum(int(cell) for cell in cells[1:]) == 2, cells

    # The replay of the last game opens on its final board and steps back to the start.
    profile.click(tid(f"replay-{games[-1]}"))
    replay = profile.locator(tid("replay"))
    replay.wait_for()
    total = int(replay.get_attribute("data-total") or 0)
    assert total > 0 and replay.get_attribute("data-step") == str(total)
    profile.locator(f"{tid('board-host')} svg").wait_for()
    profile.click(tid("replay-first"))
    profile.locator(tid("replay-step"), has_text=f"Start ({total} moves)").wait_for()
    profile.click(tid("replay-next"))
    profile.locator(tid("replay-step"), has_text=f"Move 1 of {total}").wait_for()
    screenshot(profile, "profile.png")

    # The opponent's profile is one click away.
    with profile.context.expect_page() as opened:
        profile.locator(tid(f"opponent-{bob}")).get_by_role("link", name=bob).click()
    other = opened.value
    other.locator(f"{tid('profile')}[data-loaded='true']").wait_for()
    assert other.locator(tid("profile-name")).inner_text() == bob

    phone = new_page(PHONE)
    phone.goto(f"{url}profile.html?name={bob}")
    phone.locator(f"{tid('profile')}[data-loaded='true']").wait_for()
    phone.locator(f"{tid('chart-fish')} canvas").first.wait_for()
    screenshot(phone, "profile-phone.png")

    # Nobody by that name: the page says so (the API's 404 is logged by Chromium).
    nobody = new_page(expected_errors="404")
    nobody.goto(f"{url}profile.html?name=nobody-here")
    nobody.locator(tid("errors"), has_text="nobody is named 'nobody-here'").wait_for()
