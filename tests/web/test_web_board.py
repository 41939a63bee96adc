"""The page's own modules, imported in the browser: board geometry and move indexing."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

COLOURS = ("RED", "YELLOW", "GREEN", "BLUE")


@pytest.fixture
def page(new_page: Any, web_server: Any) -> Any:
    page = new_page()
    page.goto(web_server.url)
    page.wait_for_selector("[data-testid='register']")
    return page


def run(page: Any, body: str) -> Any:
    """Evaluate ``body`` with the board module as ``board`` and the moves module as ``moves``."""
    return page.evaluate(
        f"""async () => {{
            const board = await import(new URL('js/boards/apologies.js', location.href));
            const moves = await import(new URL('js/apologies-moves.js', location.href));
            {body}
        }}"""
    )


def test_sixty_squares_run_clockwise_round_the_edge(page: Any) -> None:
    cells = run(page, "return [...Array(60).keys()].map((s) => board.squareCell(s));")
    assert len({tuple(c) for c in cells}) == 60
    for x, y in cells:
        assert x in (0, 15) or y in (0, 15)
    # Each square touches the next one, and 59 touches 0.
    for s in range(60):
        (x1, y1), (x2, y2) = cells[s], cells[(s + 1) % 60]
        assert abs(x1 - x2) + abs(y1 - y2) == 1
    assert cells[0] == [0, 0] and cells[15] == [15, 0] and cells[30] == [15, 15] and cells[45] == [0, 15]


def test_each_colour_has_its_areas_and_slides(page: Any) -> None:
    geometry = run(
        page,
        """return Object.fromEntries(Object.entries(board.GEOMETRY).map(([c, g]) => [c, {
            ...g, safe: [0, 1, 2, 3, 4].map((k) => board.safeCell(c, k)),
            turnCell: board.squareCell(g.turn), home: board.homeCell(c), start: board.startCell(c),
            slideCells: g.slides.map(([a, b]) => [board.squareCell(a), board.squareCell(b)]),
        }]));""",
    )
    # Each colour's circle, turn square, short slide ending on the circle, long slide of 4.
    expected = {
        "RED": (4, 2, [[1, 4], [9, 13]]),
        "BLUE": (19, 17, [[16, 19], [24, 28]]),
        "YELLOW": (34, 32, [[31, 34], [39, 43]]),
        "GREEN": (49, 47, [[46, 49], [54, 58]]),
    }
    inner: set[tuple[float, float]] = set()
    for colour, (circle, turn, slides) in expected.items():
        g = geometry[colour]
        assert (g["circle"], g["turn"], g["slides"]) == (circle, turn, slides)
        # The safe zone is a straight line of five cells going in from the turn square.
        path = [g["turnCell"], *g["safe"]]
        for a, b in itertools.pairwise(path):
            assert abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1
        for x, y in g["safe"]:
            assert 0 < x < 15 and 0 < y < 15
            inner.add((x, y))
        # Home lies beyond the end of the safe zone; start lies inside the board, near the circle.
        for x, y in (g["home"], g["start"]):
            assert 1 <= x <= 14 and 1 <= y <= 14
        # Both slides run along one side of the board.
        for (x1, y1), (x2, y2) in g["slideCells"]:
            assert x1 == x2 or y1 == y2
    assert len(inner) == 20
    # Start and home circles (radius about one cell) keep clear of each other and of safe zones.
    centres = [tuple(geometry[c][k]) for c in COLOURS for k in ("home", "start")]
    for i, a in enumerate(centres):
        for b in centres[i + 1 :]:
            assert (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 > 2.1**2
        for x, y in inner:
            assert (a[0] - x) ** 2 + (a[1] - y) ** 2 > 1.4**2


def test_moves_are_indexed_by_own_pawn_and_destination(page: Any) -> None:
    result = run(
        page,
        """
        const p = (color, id, where) => ({color, id: String(id), start: where === 'start', home: where === 'home',
            safe: typeof where === 'string' && where.startsWith('s') && where !== 'start' ? Number(where.slice(1)) : null,
            square: typeof where === 'number' ? where : null});
        const step = (color, id, a, b) => ({start: p(color, id, a), end: p(color, id, b)});
        const list = [
            {move_id: 'a', card: 'CARD_7', actions: [step('RED', 0, 10, 17)], side_effects: []},
            {move_id: 'b', card: 'CARD_7', actions: [step('RED', 0, 10, 14), step('RED', 1, 20, 23)], side_effects: []},
            {move_id: 'c', card: 'CARD_7', actions: [step('RED', 0, 10, 14), step('RED', 2, 30, 33)],
             side_effects: [step('YELLOW', 1, 33, 'start')]},
            {move_id: 'd', card: 'CARD_11', actions: [step('RED', 1, 20, 40), step('BLUE', 3, 40, 20)], side_effects: []},
        ];
        const index = moves.indexMoves(list, 'RED');
        const all = Object.fromEntries([...index.byPawn].map(([k, m]) =>
            [k, Object.fromEntries([...m].map(([d, t]) => [d, t.moves.map((x) => x.move_id)]))]));
        const sevens = moves.indexMoves(list, 'RED', 'CARD_11');
        return {all, onlyElevens: [...sevens.byPawn.keys()], described: moves.describeMove(list[2]),
            forfeit: moves.indexMoves([{move_id: 'f', card: 'CARD_5', actions: [], side_effects: []}], 'RED').forfeits.length};
        """,
    )
    assert result["all"] == {
        "RED-0": {"square-17": ["a"], "square-14": ["b", "c"]},
        "RED-1": {"square-23": ["b"], "square-40": ["d"]},
        "RED-2": {"square-33": ["c"]},
    }
    assert result["onlyElevens"] == ["RED-1"]
    assert (
        result["described"]
        == "7: Red0 square 10 → square 14, Red2 square 30 → square 33; sends Yellow1 to start"
    )
    assert result["forfeit"] == 1


def test_the_next_colour_follows_the_history(page: Any) -> None:
    result = run(
        page,
        """
        const e = (action, color, card) => ({action, color, card, timestamp: ''});
        const start = e('Game started with mode: GameMode.STANDARD', null, null);
        const colors = ['RED', 'GREEN', 'YELLOW'];
        return [
            moves.nextColor([start], colors),
            moves.nextColor([start, e('Played card 5: [ Red0->square 9, ]', 'RED', 'CARD_5')], colors),
            moves.nextColor([start, e('Played card 2: [ Yellow0->square 36, ]', 'YELLOW', 'CARD_2')], colors),
            moves.nextColor([start, e('Turn is forfeit; discarded card 2', 'YELLOW', 'CARD_2')], colors),
            moves.nextColor([start, e('Played card 3: [ Green0->square 52, ]', 'GREEN', 'CARD_3')], colors),
            moves.nextColor([e('Played card 3: [ Green0->home, ]', 'GREEN', 'CARD_3'),
                             e('Game completed: winner is Green after 40 turns', null, null)], colors),
            moves.describeHistory(e('Played card 2: [ Yellow1->square 34, Red2->start, ]', 'YELLOW', 'CARD_2')),
        ];
        """,
    )
    # Colour order RED, YELLOW, GREEN, BLUE; a played 2 draws again, a forfeited one does not.
    assert result == [
        None,
        "YELLOW",
        "YELLOW",
        "GREEN",
        "RED",
        None,
        "played 2: Yellow1 → square 34, Red2 → start",
    ]


def test_area_labels_sit_clear_of_the_squares(page: Any) -> None:
    """Each START and HOME label is drawn where nothing covers it: no square, safe square or other
    label overlaps it (the yellow HOME label once lay under a safety square)."""
    overlaps = page.evaluate(
        """async () => {
            const boards = await import(new URL('js/boards/index.js', location.href));
            const host = document.createElement('div');
            host.style.width = '640px';
            document.body.append(host);
            boards.createBoard('apologies', host, {}).render({});
            const box = (e) => e.getBoundingClientRect();
            const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
            const labels = [...host.querySelectorAll('[data-label]')];
            const cells = [...host.querySelectorAll('[data-square], [data-safe]')];
            const found = [];
            for (const label of labels) {
                for (const other of [...cells, ...labels]) {
                    if (other !== label && hit(box(label), box(other))) {
                        found.push(`${label.dataset.label} / ${other.dataset.square ?? other.dataset.safe ?? other.dataset.label}`);
                    }
                }
            }
            host.remove();
            return [labels.length, found];
        }"""
    )
    assert overlaps == [8, []]
