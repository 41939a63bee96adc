"""The classic page on a phone, as a new user finds it: robot moves shown one at a time with the
mover highlighted, finger-sized tap areas, "Optimal move" on screen on your turn, the card shown
once, a header on one row; and the keyboard and the colours of both pages."""

from __future__ import annotations

import itertools
import time
from typing import Any

from .browser_steps import SMALL_TARGETS, advertise, my_turn, register, screenshot, tid
from .conftest import PHONE
from .play_steps import sign_up

# The WCAG contrast ratio of each element's text against the background it is drawn on.
CONTRAST = """(selectors) => {
    const rgb = (text) => text.match(/[\\d.]+/g).map(Number);
    const luminance = ([r, g, b]) => {
        const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const backdrop = (e) => {
        for (let n = e; n; n = n.parentElement) {
            const c = rgb(getComputedStyle(n).backgroundColor);
            if (c.length < 4 || c[3] > 0.5) return c.slice(0, 3);
        }
        return [255, 255, 255];
    };
    const out = {};
    for (const selector of selectors) {
        const e = document.querySelector(selector);
        if (!e || !e.getClientRects().length) { out[selector] = null; continue; }
        const style = getComputedStyle(e);
        const fg = rgb(e instanceof SVGElement ? style.fill : style.color).slice(0, 3);
        const [a, b] = [luminance(fg), luminance(backdrop(e instanceof SVGElement ? e.closest('svg') : e))];
        out[selector] = Math.round(((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)) * 100) / 100;
    }
    return out;
}"""


def low_contrast(page: Any, selectors: list[str]) -> dict[str, float | None]:
    ratios = page.evaluate(CONTRAST, selectors)
    assert all(ratio is not None for ratio in ratios.values()), ratios  # each one is on the page
    return {selector: ratio for selector, ratio in ratios.items() if ratio < 4.5}


def tab_through(page: Any, presses: int) -> list[str]:
    """The data-testid (or data-focus) of each element the Tab key reaches, in order."""
    page.evaluate("document.activeElement?.blur()")
    reached = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        reached.append(
            page.evaluate(
                "(document.activeElement?.dataset.testid || document.activeElement?.dataset.focus) ?? ''"
            )
        )
    return reached


def test_robot_moves_one_at_a_time_on_a_phone(new_page: Any, web_server: Any) -> None:
    page = new_page(PHONE)
    pace = 150
    register(page, web_server.url, "pia", pace=pace)
    # The header is one row: every item's middle on the same line.
    middles = page.evaluate(
        """() => [...document.querySelector('.topbar').children].filter((e) => e.getClientRects().length)
            .map((e) => { const r = e.getBoundingClientRect(); return r.top + r.height / 2; })"""
    )
    assert max(middles) - min(middles) < 4, middles
    assert not page.evaluate(SMALL_TARGETS), page.evaluate(SMALL_TARGETS)
    screenshot(page, "classic-lobby-phone.png")
    advertise(page, "Robots", seats=4)
    # Each move that is shown is recorded with the time it appeared.
    page.evaluate(
        """() => { window.shown = [];
            new MutationObserver(() => { const m = document.getElementById('last-move');
                if (!m.hidden && m.dataset.seq) window.shown.push([Number(m.dataset.seq), m.dataset.color, performance.now()]); })
            .observe(document.getElementById('last-move'), {attributes: true, childList: true}); }"""
    )
    page.click(tid("start-game"))
    page.locator(tid("seat-BLUE")).wait_for()
    deadline = time.monotonic() + 30
    turns = 0
    shots: list[int] = []
    while turns < 3 or not shots:
        assert time.monotonic() < deadline, f"only {turns} turns"
        if not my_turn(page):
            page.wait_for_timeout(10)
            continue
        turns += 1
        # On my turn: Optimal move is on screen, wherever the page is scrolled; the card once.
        for scroll in ("0", "document.body.scrollHeight"):
            page.evaluate(f"window.scrollTo(0, {scroll})")
            box = page.locator(tid("optimal-move")).bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], (scroll, box)
        assert page.locator(tid("drawn-card")).count() == 0
        assert page.locator(tid("board-card")).count() == 1
        assert page.locator(tid("hint")).inner_text().startswith("You drew ")
        if page.locator(".pawn.movable").count():
            page.locator(".pawn.movable").first.click()
            page.locator(tid("target")).first.wait_for()
            small = page.evaluate(SMALL_TARGETS)
            assert not small, small
            if not shots:
                shots.append(turns)
                screenshot(page, "classic-game-phone.png")
                page.evaluate("window.scrollTo(0, 0)")
                screenshot(page, "classic-turn-phone-screen.png", full_page=False)
            page.locator(".pawn.selected").dispatch_event("click")  # unpick
        before = page.evaluate("document.getElementById('last-move').dataset.seq")
        page.click(tid("optimal-move"))
        page.wait_for_function(f"() => document.getElementById('last-move').dataset.seq !== '{before}'")
    shown = page.evaluate("window.shown")
    # The robots' moves came one at a time, each on screen for about the pace before the next,
    # with its player's seat highlighted while it is shown.
    robots = [(seq, color, at) for seq, color, at in shown if color != "RED"]
    assert len({color for _, color, _ in robots}) == 3, [(seq, color) for seq, color, _ in shown][-40:]
    seqs = [seq for seq, _, _ in shown]
    distinct = [seq for i, seq in enumerate(seqs) if i == 0 or seq != seqs[i - 1]]
    times = {seq: at for seq, _, at in reversed(shown)}  # when each move first appeared
    gaps = [times[b] - times[a] for a, b in itertools.pairwise(distinct)]
    assert distinct == sorted(distinct) and all(gap >= pace * 0.9 for gap in gaps), (shown, gaps)
    page.click(tid("cancel-game"))
    page.locator(tid("banner"), has_text="Game cancelled").wait_for()


def test_the_keyboard_reaches_the_main_controls_and_text_is_readable(new_page: Any, web_server: Any) -> None:
    classic = new_page()
    classic.goto(web_server.url)
    classic.locator(tid("register")).wait_for()
    assert {"handle", "register-button"} <= set(tab_through(classic, 6))
    register(classic, web_server.url, "kbd")
    reached = set(tab_through(classic, 30))
    assert {
        "to-play",
        "sign-out",
        "refresh",
        "advertise-toggle",
        "past-toggle",
        "chat-text",
        "chat-send",
    } <= reached, reached
    classic.focus(tid("advertise-toggle"))
    classic.keyboard.press("Enter")  # opens the form
    classic.locator(tid("game-name")).wait_for()
    readable = ["body", "#lobby h3", ".badge", f"{tid('connection')}", "summary", "#who"]
    assert not low_contrast(classic, readable)
    classic.click(tid("advertise"))
    classic.locator(tid("start-game")).wait_for()
    assert "start-game" in tab_through(classic, 40)
    classic.focus(tid("start-game"))
    classic.keyboard.press("Enter")
    classic.locator(".turn.mine").wait_for(timeout=15_000)
    reached = set(tab_through(classic, 40))
    assert any(name.startswith("pawn-RED-") for name in reached) or "optimal-move" in reached, reached
    game_text = [
        tid("turn"),
        ".seat",
        tid("hint"),
        ".history li",
        "text.area-label",
        "text.card-caption",
        "text.square-number",
        ".turn.mine",
    ]
    assert not low_contrast(classic, game_text)
    classic.click(tid("cancel-game"))

    accounts = new_page()
    accounts.goto(f"{web_server.url}play.html")
    accounts.locator(tid("signin")).wait_for()
    assert {"account-name", "account-password", "signin-button", "signup-button"} <= set(
        tab_through(accounts, 8)
    )
    assert not low_contrast(accounts, ["body", ".fine", "h2"])
    sign_up(accounts, web_server.url, "kbdplay")
    reached = set(tab_through(accounts, 40))
    assert {"create-toggle", "lobby-chat-text"} <= reached, reached
    accounts.locator(tid("stats"), has_text="connected").wait_for()
    lobby_text = ["#lobby-chat-title", tid("create-toggle"), tid("stats"), ".no-game", tid("connection")]
    assert not low_contrast(accounts, lobby_text)
