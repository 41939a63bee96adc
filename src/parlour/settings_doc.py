"""docs/settings.md, generated from parlour.settings: every setting's default, the values it
takes and its sentence, so that the reference cannot drift from the code (a test compares the
file with ``markdown()``). Regenerate it with ``make docs``, or::

    python -m parlour.settings_doc > docs/settings.md
"""

from __future__ import annotations

import sys
from dataclasses import Field, fields
from typing import Any, Final

from parlour.settings import BOUNDS, CHOICES, HELP, NOT_NEGATIVE, Settings

__all__ = ["REGENERATE", "SECTIONS", "main", "markdown"]

REGENERATE: Final = "make docs (or: python -m parlour.settings_doc > docs/settings.md)"

#: The reference's sections, each named with the first setting it holds: the settings are
#: declared in this order in ``Settings``, so a new one lands in the section it was written in.
SECTIONS: Final = (
    ("Listeners, robot and logs", "host"),
    ("What one client may cost", "max_connections"),
    ("Idle connections, players and games", "websocket_idle"),
    ("Fish tables (TCP)", "fish_port"),
    ("Tsuro tables (TCP)", "tsuro_port"),
    ("The store", "store"),
    ("Accounts and sign-in (`/async`)", "session_ttl"),
    ("The `/async` protocol", "async_ping_timeout"),
    ("Push notifications (`/async`)", "notify_webhook_url"),
    ("Several nodes", "cluster"),
)

_HEADER: Final = f"""\
# Settings

<!-- Generated from src/parlour/settings.py: do not edit by hand.
     Regenerate with: {REGENERATE} -->

Every setting has a default and can be set, lowest precedence first, in a TOML file
(`--config FILE`, table `[parlour]`), by an environment variable `PARLOUR_<NAME>`, or by a flag
`--<name>` with dashes for underscores: `max_players = 2000` in the file,
`PARLOUR_MAX_PLAYERS=2000` and `--max-players 2000` say the same. Unknown names and bad values
are refused at start with a message naming the setting. Times are in seconds.
`parlour serve --help` prints the same sentences.

```toml
[parlour]
host = "0.0.0.0"
store = "/var/lib/parlour/parlour.db"
max_players = 2000
```

Secrets (`auth_jwt_key`, `notify_webhook_url`, a password in a `store` or `cluster` URL) are
better set in the environment than on the command line, which other users of the machine can
read; Parlour never logs them.\
"""


def _duration(seconds: float) -> str:
    """A readable form of a long default ("2 min", "30 days"), or nothing for a short one."""
    for unit, size in (("days", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= 2 * size and seconds % size == 0:
            return f" ({seconds / size:g} {unit})"
    return ""


def _default(field: Field[Any], value: object) -> str:
    if value == "":
        return "empty"
    if not isinstance(value, float):
        return f"`{value}`"
    text = f"`{int(value) if value.is_integer() else value}`"
    return text + _duration(value) if HELP[field.name].startswith("Seconds") else text


def _values(field: Field[Any]) -> str:
    """The kind of value and what the validation allows, in words."""
    if field.name in CHOICES:
        return "one of " + ", ".join(f"`{choice}`" for choice in CHOICES[field.name])
    kind = str(field.type)
    if kind not in ("int", "float"):
        return "text"
    rule = BOUNDS.get(field.name, NOT_NEGATIVE).describe().removeprefix("be ")
    if rule == "not be negative":
        rule = "not negative"
    return f"{'integer' if kind == 'int' else 'number'}, {rule}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown() -> str:
    """The whole of docs/settings.md."""
    defaults = Settings()
    starts = {first: title for title, first in SECTIONS}
    lines = [_HEADER]
    for field in fields(Settings):
        if field.name in starts:
            lines += ["", f"## {starts[field.name]}", ""]
            lines += ["| setting | default | values | meaning |", "|---|---|---|---|"]
        cells = (
            f"`{field.name}`",
            _default(field, getattr(defaults, field.name)),
            _values(field),
            HELP[field.name],
        )
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    sys.stdout.write(markdown())


if __name__ == "__main__":
    main()
