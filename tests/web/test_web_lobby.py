"""The lobby in the browser: registration, games, invitations, chat, quit and cancel, errors."""

from __future__ import annotations

from typing import Any

from .browser_steps import advertise, host_and_guest, register, screenshot, tid
from .conftest import PHONE


def test_registration_is_remembered_and_listed(new_page: Any, web_server: Any) -> None:
    page = new_page()
    register(page, web_server.url, "lina")
    stored = page.evaluate(
        "[localStorage.getItem('parlour.apologies.handle'), localStorage.getItem('parlour.apologies.player_id')]"
    )
    assert stored[0] == "lina"
    assert len(stored[1]) == 36  # a UUID4
    assert "waiting" in page.locator(tid("player-lina")).inner_text()
    assert page.locator(tid("connection")).inner_text() == "connected"


def test_invitation_join_chat_quit_and_cancel(new_page: Any, web_server: Any) -> None:
    ann, bob, cat = new_page(), new_page(), new_page(PHONE)
    register(ann, web_server.url, "ann")
    register(bob, web_server.url, "bob")
    register(cat, web_server.url, "cat")

    advertise(ann, "Ann's table", seats=3, visibility="PRIVATE", invites="bob")
    assert ann.locator(tid("start-game")).is_visible()
    assert ann.locator(tid("cancel-game")).is_visible()
    assert ann.locator(tid("quit-game")).is_hidden()

    # The invitation arrives as it is sent; the private game is listed for bob, not for cat.
    invitation = bob.locator(tid("message-invite"))
    invitation.wait_for()
    assert "ann invites you to “Ann's table”" in invitation.inner_text()
    bob.click(tid("refresh"))
    bob.locator(tid("game-item"), has_text="Ann's table").wait_for()
    cat.click(tid("refresh"))
    cat.locator(f"{tid('games')} .empty").wait_for()
    assert "Ann's table" not in cat.locator(tid("games")).inner_text()

    invitation.locator(tid("invitation-join")).click()
    bob.locator(tid("game-title"), has_text="Ann's table").wait_for()
    assert bob.locator(tid("quit-game")).is_visible()
    assert bob.locator(tid("start-game")).is_hidden()
    ann.locator(tid("seats"), has_text="bob").wait_for()
    ann.locator(tid("turn"), has_text="2 of 3 seats taken").wait_for()

    # Chat to a ticked player and to a typed handle.
    ann.click(tid("refresh"))
    ann.locator(tid("chat-pick-bob")).check()
    ann.fill(tid("chat-to"), "cat")
    ann.fill(tid("chat-text"), "Welcome aboard")
    ann.click(tid("chat-send"))
    bob.locator(tid("message-chat"), has_text="ann: Welcome aboard").wait_for()
    cat.locator(tid("message-chat"), has_text="ann: Welcome aboard").wait_for()
    screenshot(ann, "lobby.png")
    screenshot(cat, "lobby-phone.png")
    assert cat.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    bob.click(tid("quit-game"))
    bob.locator(tid("banner"), has_text="You left this game").wait_for()
    ann.locator(tid("messages"), has_text="Player bob quit").wait_for()
    bob.click(tid("close-game"))
    assert bob.locator(tid("game")).is_hidden()

    ann.click(tid("cancel-game"))
    ann.locator(tid("banner"), has_text="Game cancelled: cancelled by its advertiser").wait_for()
    ann.click(tid("refresh"))
    ann.locator(f"{tid('player-ann')} .badge", has_text="waiting").wait_for()


def test_request_failures_are_shown_in_words(new_page: Any, web_server: Any) -> None:
    first, second = new_page(), new_page()
    register(first, web_server.url, "dora")
    second.goto(web_server.url)
    second.fill(tid("handle"), "dora")
    second.click(tid("register-button"))
    error = second.locator(tid("error"))
    error.wait_for()
    assert error.get_attribute("data-reason") == "DUPLICATE_USER"
    # Said once (not "Handle already in use : Handle is already in use"), with a way back in.
    text = error.inner_text()
    assert text.lower().count("in use") == 1, text
    assert second.locator(tid("register")).is_visible()
    screenshot(second, "classic-handle-in-use.png")
    second.click(tid("use-other-handle"))
    assert error.count() == 0
    other = second.locator(tid("handle")).input_value()
    assert other.startswith("dora") and other != "dora"
    second.click(tid("register-button"))
    second.wait_for_selector(f"{tid('who')}:text-is('{other}')")

    # A second advertisement while in a game: ALREADY_PLAYING, with the server's comment.
    advertise(first, "One")
    first.click(tid("advertise"))
    error = first.locator(f"{tid('error')}[data-reason='ALREADY_PLAYING']")
    error.wait_for()
    assert "You are already in a game" in error.inner_text()
    assert "Player is already playing a game" in error.inner_text()
    error.locator(tid("dismiss-error")).click()
    assert first.locator(tid("error")).count() == 0


def test_a_join_fills_the_game_and_starts_it(new_page: Any, web_server: Any) -> None:
    eli, fay = host_and_guest(new_page, web_server.url, ("eli", "fay"), "Duel", seats=2)
    for page in (eli, fay):
        page.locator(tid("seats"), has_text="eli").wait_for()
        assert page.locator("[data-testid^='pawn-']").count() == 8
        assert page.locator(tid("seat-RED")).inner_text().startswith("eli")
        assert page.locator(tid("seat-YELLOW")).inner_text().startswith("fay")
    eli.click(tid("cancel-game"))
    fay.locator(tid("banner"), has_text="Game cancelled").wait_for()


def test_sign_out_frees_the_handle(new_page: Any, web_server: Any) -> None:
    page = new_page()
    register(page, web_server.url, "sam")
    page.click(tid("sign-out"))  # UNREGISTER_PLAYER
    page.locator(tid("notice"), has_text="your handle is free again").wait_for()
    assert page.locator(tid("register")).is_visible()
    assert page.evaluate("localStorage.getItem('parlour.apologies.player_id')") is None
    other = new_page()
    register(other, web_server.url, "sam")


def test_an_id_the_server_does_not_know_registers_anew(new_page: Any, web_server: Any) -> None:
    page = new_page()
    page.goto(web_server.url)
    # Connected, with nothing stored: the form is up. (Stored any earlier, the id would be sent
    # on this connection too, and the reload would find "tess" taken.)
    page.locator(tid("register")).wait_for()
    page.evaluate(
        """localStorage.setItem('parlour.apologies.handle', 'tess');
        localStorage.setItem('parlour.apologies.player_id', '00000000-0000-4000-8000-000000000000')"""
    )
    page.reload()
    # REREGISTER_PLAYER with an unknown id registers the handle with a new id.
    page.locator(tid("who"), has_text="tess").wait_for()
    page.locator(tid("notice"), has_text="registered again as tess").wait_for()
    new_id = page.evaluate("localStorage.getItem('parlour.apologies.player_id')")
    assert len(new_id) == 36 and new_id != "00000000-0000-4000-8000-000000000000"
