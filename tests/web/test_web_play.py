"""The accounts page (play.html) against a real server's /async: accounts, invitations, whole Fish
and Tsuro games played by clicking on the boards, reloads, the outcome and its confirmation."""

from __future__ import annotations

import re
import time
from typing import Any

from .browser_steps import SMALL_TARGETS, screenshot, tid
from .conftest import PHONE
from .play_steps import (
    accept,
    current_game,
    invite,
    legal_actions,
    my_turn,
    no_errors,
    open_create_form,
    play_apologies,
    play_fish,
    play_tsuro,
    play_until_over,
    shoot,
    sign_up,
    turn_index,
)


def test_a_whole_fish_game_by_invitation(new_page: Any, url: str) -> None:
    ann, bob = new_page(), new_page(PHONE)
    ann.goto(f"{url}play.html")
    ann.locator(tid("signin")).wait_for()
    screenshot(ann, "play-signin.png")
    sign_up(ann, url, "fann")
    sign_up(bob, url, "fbob")
    game = invite(ann, "fish", ["fbob"], clock="blitz")
    # The invitation reaches bob, in his games, with Accept and Decline.
    bob.locator(tid(f"news-{game}"), has_text="Invitation waiting").wait_for()
    ann.locator(tid("invitation-box"), has_text="Waiting for fbob to accept").wait_for()
    shoot({"": ann, "-phone": bob}, "play-invitation")
    accept(bob, game)
    for page in (ann, bob):
        page.locator(tid("board")).wait_for()
        assert current_game(page) == game
    assert "5 min + 5 s a move" in ann.locator(tid("game-meta")).inner_text()

    # The first placement with the keyboard alone: Tab to a tile, Enter.
    ann.locator(".turn.mine").wait_for()
    first = legal_actions(ann)[0]
    tile = re.fullmatch(r"place (\d+),(\d+)", first)
    assert tile
    ann.focus(tid(f"tile-{tile[1]}-{tile[2]}"))
    ann.keyboard.press("Enter")
    bob.locator(f"{tid('penguin-' + tile[1] + '-' + tile[2])}[data-owner='1']").wait_for()

    shots: list[int] = []

    def shot(page: Any, moves: int) -> None:
        if moves == 10 and not shots:
            shots.append(moves)
            shoot({"": ann, "-phone": bob}, "play-fish")
            # The phone-sized page has no sideways scrolling.
            assert bob.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
            # Every control and every tap area of the board is finger-sized on the phone.
            assert not bob.evaluate(SMALL_TARGETS), bob.evaluate(SMALL_TARGETS)
            # Both clocks are shown, and the mover's ticks down.
            assert re.fullmatch(r"\d+:\d\d", ann.locator(tid("clock-1")).inner_text())

    moves = play_until_over([ann, bob], play_fish, 40, shot=shot)
    assert moves >= 7  # four penguins each placed (one with the keyboard), then moves
    assert shots
    for page in (ann, bob):
        rows = page.locator(f"{tid('outcome-rows')} tr")
        assert rows.count() == 2
        # A ranked game: every row shows its rating change ("±0" after a draw of equals).
        assert all(re.search(r"[+\-±]\d", rows.nth(i).inner_text()) for i in range(2))
        assert page.locator(tid("confirm-outcome")).is_visible()
        assert page.locator(tid("turn")).inner_text() == "Game over"
        assert page.locator(tid(f"news-{game}")).inner_text() == "Outcome to confirm"
    shoot({"": ann, "-phone": bob}, "play-outcome")
    for page in (ann, bob):
        page.click(tid("confirm-outcome"))
        page.locator(tid(f"news-{game}"), has_text="Finished").wait_for()
        assert page.locator(tid("confirm-outcome")).is_hidden()
    no_errors(ann, bob)


def test_a_whole_tsuro_game_with_a_robot(new_page: Any, url: str) -> None:
    cy, dee = new_page(), new_page(PHONE)
    sign_up(cy, url, "tcy")
    sign_up(dee, url, "tdee")
    game = invite(cy, "tsuro", ["tdee"], robots=1)
    accept(dee, game)
    for page in (cy, dee):
        page.locator(tid("board")).wait_for()
        page.locator(tid("seat-3"), has_text="robot").wait_for()
    shots: list[int] = []

    def shot(page: Any, moves: int) -> None:
        # The phone's second turn (a game of random deals may end after a few turns).
        if not shots and page is dee and moves >= 2:
            shots.append(moves)
            # The tile chosen and its square ringed, on both screens.
            page.click(tid(f"tsuro-tile-{page.locator(tid('board')).get_attribute('data-tile')}"))
            shoot({"": cy, "-phone": dee}, "play-tsuro")
            # The squares to play on (and every control) are finger-sized on the phone.
            # Turned (or another tile of the hand taken) until it fits: a tile whose every
            # turn would be suicide is not legal while another tile has a safe one.
            tiles = [
                tile.get_attribute("data-testid")
                for tile in page.locator("[data-testid^='tsuro-tile-']").all()
            ]
            for tile in tiles:
                page.click(tid(str(tile)))
                for _ in range(4):
                    if page.locator("svg [data-focus^='square-']").count():
                        break
                    page.click(tid("rotate-right"))
                if page.locator("svg [data-focus^='square-']").count():
                    break
            assert page.locator("svg [data-focus^='square-']").count()
            assert not page.evaluate(SMALL_TARGETS), page.evaluate(SMALL_TARGETS)
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    def pick(page: Any, actions: list[str]) -> str:
        # The tile already chosen, as it lies, when it fits: fewer clicks, a quicker test.
        tile = page.locator(tid("board")).get_attribute("data-tile")
        ready = [action for action in actions if action.startswith(f"tile {tile} rotation 0 ")]
        return (ready or actions)[len(ready or actions) // 2]

    moves = play_until_over([cy, dee], play_tsuro, 45, pick=pick, shot=shot)
    assert shots and moves >= 3, moves  # the phone's board looked at in the middle of the game
    for page in (cy, dee):
        assert page.locator(f"{tid('outcome-rows')} tr").count() == 3
        # Every avatar that left the board is drawn out, and its seat says so.
        states = page.evaluate(
            "[...document.querySelectorAll(\"[data-testid^='avatar-']\")].map((a) => a.dataset.state)"
        )
        assert len(states) == 3 and states.count("ALIVE") <= 1
        assert "eliminated" in page.locator(tid("seats")).inner_text()
    shoot({"": cy, "-phone": dee}, "play-tsuro-outcome")
    no_errors(cy, dee)


def test_an_invitation_accepted_in_one_page_and_declined_in_another(new_page: Any, url: str) -> None:
    ann, bob, cat = new_page(), new_page(), new_page(PHONE)
    for page, name in ((ann, "iann"), (bob, "ibob"), (cat, "icat")):
        sign_up(page, url, name)
    first = invite(ann, "tsuro", ["ibob"], robots=1)
    game = invite(ann, "fish", ["ibob", "icat"])
    for page in (bob, cat):
        page.locator(tid(f"news-{game}"), has_text="Invitation waiting").wait_for()
    # bob accepts the first: it starts while ann looks at the second, and her list says so.
    accept(bob, first)
    ann.locator(tid(f"news-{first}"), has_text="Your turn").wait_for()
    assert current_game(ann) == game
    ann.click(tid(f"open-game-{first}"))
    ann.locator(tid("tsuro-controls")).wait_for()
    assert ann.locator(tid("game-title")).inner_text() == f"Tsuro #{first}"
    ann.click(tid(f"open-game-{game}"))
    ann.locator(tid("invitation-box"), has_text="Waiting for ibob, icat to accept").wait_for()
    cat.click(tid(f"open-game-{game}"))
    cat.locator(tid("accept-invitation")).wait_for()
    screenshot(cat, "play-invited-phone.png")
    accept(bob, game)
    bob.locator(tid(f"news-{game}"), has_text="Waiting for answers").wait_for()
    cat.click(tid("decline-invitation"))
    cat.locator(tid("notice"), has_text="You declined the invitation.").wait_for()
    assert cat.locator(tid(f"my-game-{game}")).count() == 0
    ann.locator(tid(f"news-{game}"), has_text="Declined").wait_for()
    bob.locator(tid(f"news-{game}"), has_text="Cancelled").wait_for()
    ann.locator(tid("turn"), has_text="The invitation was declined.").wait_for()
    # Closing a cancelled game takes it off the list.
    ann.click(tid("close-game"))
    ann.locator(tid(f"my-game-{game}")).wait_for(state="detached")
    no_errors(ann, bob, cat)


def whose_turn(pages: list[Any], seconds: float = 10) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        for page in pages:
            if my_turn(page) and legal_actions(page):
                return page
        assert time.monotonic() < deadline, "nobody's turn"
        pages[0].wait_for_timeout(10)


def test_an_adult_apologies_game_with_hard_robots(new_page: Any, url: str) -> None:
    """The create form's robot level and Apologies mode reach the game's configuration."""
    gus, hal = new_page(), new_page()
    sign_up(gus, url, "lgus")
    sign_up(hal, url, "lhal")
    game = invite(gus, "apologies", ["lhal"], robots=1, level="hard", mode="ADULT")
    accept(hal, game)
    for page in (gus, hal):
        page.locator("[data-testid^='pawn-GREEN-']").first.wait_for()
        meta = page.locator(tid("game-meta"))
        meta.filter(has_text="hard robots").wait_for()
        assert "adult" in meta.inner_text()
    no_errors(gus, hal)


def test_a_reload_mid_game_lands_on_the_same_game_and_turn(new_page: Any, url: str) -> None:
    # Apologies under server rules, on the classic page's board.
    eve, fay = new_page(), new_page()
    sign_up(eve, url, "reve")
    sign_up(fay, url, "rfay")
    game = invite(eve, "apologies", ["rfay"])
    accept(fay, game)
    for page in (eve, fay):
        page.locator("[data-testid^='pawn-RED-']").first.wait_for()
    # Three turns by clicking, then a reload of the page whose turn it is.
    for _ in range(3):
        page = whose_turn([eve, fay])
        before = turn_index(page)
        play_apologies(page, legal_actions(page)[-1])
        page.wait_for_function(
            f"() => Number(document.querySelector(\"[data-testid='game']\").dataset.turnIndex) > {before}"
        )
    mover = whose_turn([eve, fay])
    screenshot(mover, "play-apologies.png")
    turn, legal = turn_index(mover), legal_actions(mover)
    mover.reload()
    mover.locator(".turn.mine").wait_for()
    assert current_game(mover) == game
    assert turn_index(mover) == turn
    assert legal_actions(mover) == legal
    assert mover.locator(tid("signin")).is_hidden()
    # The game goes on from there.
    play_apologies(mover, legal[-1])
    mover.wait_for_function(
        f"() => Number(document.querySelector(\"[data-testid='game']\").dataset.turnIndex) > {turn}"
    )
    no_errors(eve, fay)


def test_open_games_passwords_errors_keyboard_and_tap_targets(new_page: Any, url: str) -> None:
    gus = new_page()
    hal = new_page(PHONE, expected_errors="401")
    sign_up(gus, url, "ogus")
    # A wrong password is said in words, not in a console.
    hal.goto(f"{url}play.html")
    hal.fill(tid("account-name"), "ogus")
    hal.fill(tid("account-password"), "not the password")
    hal.click(tid("signin-button"))
    hal.locator(tid("signin-error"), has_text="Wrong name or password.").wait_for()
    screenshot(hal, "play-signin-phone.png")
    sign_up(hal, url, "ohal")

    # An open Fish game for three with a password and a one-day clock, made with the keyboard.
    open_create_form(gus)
    gus.select_option(tid("create-rules"), "fish")
    gus.check(tid("create-how-open"))
    gus.select_option(tid("create-seats"), "3")
    gus.fill(tid("create-password"), "sesame")
    gus.select_option(tid("create-clock"), "day")
    gus.focus(tid("create-clock"))
    for _ in range(2):
        gus.keyboard.press("Tab")
    assert gus.evaluate("document.activeElement.dataset.testid") == "create"
    gus.keyboard.press("Enter")
    gus.locator(tid("invitation-box"), has_text="1 of 3 seats taken").wait_for()
    game = current_game(gus)

    item = hal.locator(tid(f"open-game-item-{game}"))
    item.wait_for()
    assert hal.locator(tid(f"lock-{game}")).inner_text() == "password"
    assert "1 day" in item.inner_text()
    screenshot(gus, "play-lobby.png")
    screenshot(hal, "play-lobby-phone.png")
    hal.fill(tid(f"join-password-{game}"), "wrong")
    hal.click(tid(f"join-{game}"))
    hal.locator(tid("error"), has_text="the password is wrong").wait_for()
    hal.fill(tid(f"join-password-{game}"), "sesame")
    hal.click(tid(f"join-{game}"))
    hal.locator(tid("invitation-box"), has_text="2 of 3 seats taken").wait_for()
    assert current_game(hal) == game

    # Tap targets of 44 px and more on the phone, and no sideways scrolling.
    small = hal.evaluate(
        """() => [...document.querySelectorAll('button, select, input, summary, a, [role=button]')]
            .filter((e) => e.offsetParent !== null)
            // A checkbox or radio button is tapped through its label.
            .map((e) => [e.dataset.testid || e.textContent.trim().slice(0, 20), e.closest('label.check') ?? e])
            .map(([name, e]) => [name, e.getBoundingClientRect()])
            .filter(([, r]) => r.width > 0 && r.height < 44)
            .map(([name, r]) => `${name}: ${Math.round(r.height)} px`)"""
    )
    assert not small, small
    assert hal.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    # The creator starts with two of three seats; a forfeit hands the seat to a robot.
    gus.locator(tid("invitation-box"), has_text="2 of 3 seats taken").wait_for()
    gus.click(tid("start-now"))
    for page in (gus, hal):
        page.locator(tid("board")).wait_for()
        page.locator(tid("clock-1"), has_text=re.compile(r"^2[34]:\d\d:\d\d$")).wait_for()
    hal.click(tid("forfeit"))
    hal.click(tid("forfeit-confirm"))
    gus.locator(tid("seat-2"), has_text="forfeited: a robot plays").wait_for()
    hal.locator(tid("seat-2"), has_text="forfeited: a robot plays").wait_for()
    assert hal.locator(tid("forfeit")).is_hidden()
    # gus plays on against the robot (Fish places alternate: gus, robot, gus...).
    gus.locator(".turn.mine").wait_for()
    before = turn_index(gus)
    play_fish(gus, legal_actions(gus)[0])
    gus.wait_for_function(
        f"() => Number(document.querySelector(\"[data-testid='game']\").dataset.turnIndex) >= {before + 2}"
    )
    gus.locator(".turn.mine").wait_for()
    screenshot(gus, "play-forfeit.png")
    hal.locator(tid("dismiss-error")).click()  # the wrong password, said in words above
    no_errors(gus, hal)
