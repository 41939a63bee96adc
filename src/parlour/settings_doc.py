"""docs/settings.md, generated from parlour.settings: every setting's default, the values it
takes and its sentence, so that the reference cannot drift from the code (a test compares the
file with ``markdown()``). Regenerate it with ``make docs``, or::

    python -m parlour.settings_doc > docs/settings.md
"""

from __future__ import annotations

import sys
from dataclasses import Field, fields
from typing import Any, Final

from parlour.settings import (
    BOUNDS,
    CHOICES,
    CLUSTER_SCHEMES,
    HELP,
    JWT_HMAC_KEY_BYTES,
    JWT_PUBLIC_KEY_ALGORITHMS,
    NOT_NEGATIVE,
    STORE_FORMS,
    WEBHOOK_SCHEMES,
    Settings,
)

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


def _listed(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{value}`" for value in values)


#: What the text settings that are not a fixed choice accept, from the constants Settings checks
#: them against.
_TEXT_VALUES: Final = {
    "host": "an address to bind",
    "exempt_addresses": "addresses, comma-separated",
    "store": STORE_FORMS,
    "auth_jwt_key": "empty, a PEM public key, or a secret of at least "
    + ", ".join(f"{size} bytes for {name}" for name, size in JWT_HMAC_KEY_BYTES.items()),
    "auth_jwt_algorithms": f"names, comma-separated: only of {_listed(tuple(JWT_HMAC_KEY_BYTES))}, "
    f"or only of {_listed(JWT_PUBLIC_KEY_ALGORITHMS)}",
    "auth_jwt_name_claim": "a claim's name (not empty)",
    "notify_webhook_url": f"empty, or a URL: {_listed(WEBHOOK_SCHEMES)}",
    "cluster": f"empty, or a URL: {_listed(CLUSTER_SCHEMES)} (needs a store other than `none`)",
}


def _values(field: Field[Any]) -> str:
    """The kind of value and what the validation allows, in words."""
    if field.name in CHOICES:
        return "one of " + _listed(CHOICES[field.name])
    kind = str(field.type)
    if kind not in ("int", "float"):
        return _TEXT_VALUES.get(field.name, "text")
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
