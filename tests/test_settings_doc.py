"""docs/settings.md is generated from parlour.settings and states the rules Settings enforces."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest

from parlour.settings import BOUNDS, CHOICES, HELP, SettingError, Settings
from parlour.settings_doc import REGENERATE, SECTIONS, markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "settings.md"
NAMES = [field.name for field in fields(Settings)]


def test_doc_is_not_stale() -> None:
    assert DOC.is_file(), f"docs/settings.md is missing: run {REGENERATE}"
    assert DOC.read_text(encoding="utf-8") == markdown(), f"docs/settings.md is stale: run {REGENERATE}"


def test_every_setting_has_one_row_in_a_section() -> None:
    text = markdown()
    rows = [
        line.split(" | ", 1)[0].removeprefix("| ").strip("`")
        for line in text.splitlines()
        if line.startswith("| `")
    ]
    assert rows == NAMES
    firsts = [first for _, first in SECTIONS]
    assert NAMES[0] == firsts[0] and firsts == sorted(firsts, key=NAMES.index)
    assert text.count("\n## ") == len(SECTIONS)


def test_a_row_says_default_values_and_meaning() -> None:
    text = markdown()
    assert "| `port` | `8080` | integer, between 0 and 65535 | The websocket/HTTP port" in text
    assert "| `fish_players` | `2` | integer, 2, 3 or 4 |" in text
    assert "| `session_ttl` | `2592000` (30 days) | number, positive |" in text
    assert "| `store_sync` | `normal` | one of `normal`, `full` |" in text
    assert (
        "| `auth_jwt_key` | empty | empty, a PEM public key, or a secret of at least 32 bytes for HS256"
        in text
    )
    assert "| `cluster` | empty | empty, or a URL: `redis://`, `rediss://`, `unix://`" in text
    assert "| `auth_jwt_issuer` | empty | text |" in text
    assert HELP["cluster_lease"] in text


def test_the_tables_name_real_settings() -> None:
    assert set(BOUNDS) <= set(NAMES) and set(CHOICES) <= set(NAMES)


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_the_stated_bound_is_the_enforced_one(name: str) -> None:
    """A value just past each stated bound is refused with the sentence the reference prints."""
    bound = BOUNDS[name]
    # In a cluster, where every value of every bound is allowed (workers other than 1 need one).
    base = Settings(cluster="redis://127.0.0.1:6379/0")
    kind = type(getattr(base, name))
    below = bound.low if bound.above else bound.low - (1 if kind is int else 0.01)
    with pytest.raises(SettingError, match=f"^{name} must {bound.describe()}, not "):
        replace(base, **{name: kind(below)})
    replace(base, **{name: kind(bound.low if not bound.above else bound.low + 1)})
    if bound.high is not None:
        with pytest.raises(SettingError, match=f"^{name} must {bound.describe()}"):
            replace(base, **{name: kind(bound.high + 1)})


def test_choices_are_enforced_with_their_list() -> None:
    with pytest.raises(SettingError, match=r"^store_writer must be one of log, process, thread, not 'fork'$"):
        Settings(store_writer="fork")
    with pytest.raises(
        SettingError,
        match=r"^robot must be one of random, greedy, search, rollout, easy, normal, hard, not 'x'$",
    ):
        Settings(robot="x")
    with pytest.raises(SettingError, match=r"^notify_poll must be positive, not nan$"):
        Settings(notify_poll=float("nan"))
