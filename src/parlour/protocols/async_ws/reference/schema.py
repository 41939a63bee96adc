"""The JSON Schema of the /async protocol and the protocol reference generated from it (S2).

``schema()`` is what ``GET /async/schema.json`` serves; ``markdown()`` renders the same schema as
docs/async-protocol.md, so the declarations in wire/messages.py, the schema and the document cannot
drift (a test compares the file with ``markdown()``). Regenerate the document with::

    python -m parlour.protocols.async_ws.reference.schema > docs/async-protocol.md
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Final

import msgspec

from parlour.protocols.async_ws.wire.messages import EXTENSION, EXTENSIONS, ClientMessage, ServerMessage

__all__ = ["REGENERATE", "main", "markdown", "schema"]

REGENERATE: Final = "python -m parlour.protocols.async_ws.reference.schema > docs/async-protocol.md"
_DEFS: Final = "#/$defs/"
_EXTENSIONS: Final = frozenset(cls.__name__ for cls in EXTENSIONS)

# Hand-written: the framing (S1) and the rules every message shares (S2, S3, S20), which the
# per-message sections below cannot say once.
_HEADER: Final = f"""\
# The Parlour async protocol (Scalable Server workflows)

<!-- Generated from src/parlour/protocols/async_ws/wire/messages.py: do not edit by hand.
     Regenerate with: {REGENERATE} -->

Parlour offers every workflow of the Scalable Server text with its message names, field names,
statuses and error codes (decisions S1-S20 in `docs/async-decisions.md`).

## Framing (S1)

- A websocket on the main HTTP port at path `/async`; every other path stays the Apologies protocol.
- One JSON object per **text** frame: `{{"type": "<MessageName>", ...fields}}`. Message and field
  names are spelled exactly as in the text (`ActionCommitedRequest`, `finalScores`, `sessionToken`).
  Binary frames are answered with `ErrorRequest` `BAD_REQUEST`.
- Opaque payloads (states, summaries, user data, multicast data) are JSON strings; put base64 there
  to carry bytes. Booleans are JSON booleans (S20).
- Fields with a default may be left out, and the server leaves them out when they hold it.
  Unknown fields are refused.

## Accounts and sessions (S4, S5)

- `POST /api/accounts` with `{{"name": ..., "password": ...}}` creates an account: 201
  `{{"player_id", "name"}}`; 409 when the name is taken (names compare case-insensitively); 400 says
  what is wrong with the name (1-40 letters, digits, `_`, `-`, `.`) or the password (8-256 characters).
- `POST /api/sessions` with the same body signs in: 200 `{{"token", "expires", "player_id", "name"}}`.
  A wrong name or password is 401 (the same answer for both); too many failures for a name or from
  an address are 429 with `Retry-After`.
- The token goes in `AsyncAuthRequest.sessionToken`. It is signed and expires (`session_ttl`, 30
  days by default) and survives server restarts. A deployment with its own OAuth2/OIDC provider
  sets the `auth_jwt_*` settings: the provider's JWT is then the `sessionToken`.
- One live connection per account: signing in elsewhere closes the older connection after an
  `AsyncConnectionErrorRequest` with reason `REPLACED`. Games outlive connections. A connection
  silent for `async_ping_timeout` (60 s) is closed: send `PingRequest` regularly.
- `GET /api/players?name=` finds an account's `player_id` by name (to invite it); 404 if none.
- `GET /api/leaderboard?game_type=&limit=` lists ratings: `rating` on the Elo-like scale people
  read (1500 to start, `provisional` until 5 games; docs/ratings.md), with the OpenSkill `ordinal`,
  `mu`, `sigma` and `games`; settled players first, each group best first.
- `GET /api/profile?name=` is a player's profile: ratings, their history per game type, recent
  games and the record against each opponent (docs/ratings.md); 404 if nobody has the name.
- `GET /api/async/catalogue` says what a client needs before it plays, so that it keeps no copy:
  `{{"games": [{{"rules", "name", "min_seats", "max_seats"}}], "errors", "join_denied",
  "start_denied", "observe_denied", "connection_errors"}}`: the games under server rules with the
  seats each allows, and English words for every `ErrorRequest.code`, `LobbyJoinDeniedRequest.cause`,
  `LobbyStartGameDeniedRequest.cause`, `GameObservedRequest.status` and
  `AsyncConnectionErrorRequest.reason` (objects from code to words). No account needed.

## Requests, replies and errors (S2, S3)

- A client may add `request_id` (a string of 1 to 64 characters) to any request; the direct reply
  echoes it. Messages the server sends on its own carry none.
- A refused request gets `ErrorRequest{{code, message, request_type, request_id}}`: an unknown
  `type`, an unknown, missing, ill-typed or out-of-range field is `BAD_REQUEST` and the message
  names the field. A bad request never closes the connection; only a flood past the rate limit
  does (close code 1008).
- `recipients_ids` is accepted on input as an alias of `recipient_ids` (S20); the server always
  writes `recipient_ids`.
- Ids (S6): global ids are positive account ids; local ids are seats 1..`max_players` in join
  order; game ids are positive.

## Parlour extensions

Parlour adds a few messages and fields to the text, each marked **{EXTENSION}** below. A client of
the seed protocol never sends them, so it is never sent anything it does not know. They make the
lobby lists scale (a client that asks for them gets the whole lists once, then only what
changed (`EnterLobbyRequest.deltas`, `GetLobbyListsRequest`, `LobbyListDeltaRequest`); the others
get lists capped to `async_lobby_list_cap` entries in a large lobby: docs/async.md), offer quick
play, and show ratings as people read them.

Three extension fields carry the ratings as people read them (docs/ratings.md):
`OutcomeEntry.shown`, `Penalty.shown` and `Player.shown_ratings`. They sit in structures whose
fields the text does not name at all (ranking information and penalties, rows 82 and 84;
the text's Player), beside the ordinal fields Parlour chose there before (`rating_change`, `ratings`), so
every client gets them: a client of the seed protocol can know no field of these structures.

The JSON Schema of all this is served at `GET /async/schema.json`.
"""


def schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of every message both ways, with `ClientMessage` and `ServerMessage`."""
    (client, server), components = msgspec.json.schema_components(
        (ClientMessage, ServerMessage), ref_template=_DEFS + "{name}"
    )
    defs = dict(components)
    defs["ClientMessage"] = client
    defs["ServerMessage"] = server
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Parlour async protocol",
        "description": "One JSON object per websocket text frame on /async, tagged on `type` (S1, S2).",
        "anyOf": [{"$ref": _DEFS + "ClientMessage"}, {"$ref": _DEFS + "ServerMessage"}],
        "$defs": defs,
    }


def _refs(union: dict[str, Any]) -> list[str]:
    return [str(option["$ref"]).removeprefix(_DEFS) for option in union["anyOf"]]


def _anchor(name: str) -> str:
    return name.lower()


def _type(node: dict[str, Any]) -> str:
    """A property's type in a few words, with its constraints."""
    if "$ref" in node:
        name = str(node["$ref"]).removeprefix(_DEFS)
        return f"[{name}](#{_anchor(name)})"
    if "anyOf" in node:
        return " or ".join(_type(option) for option in node["anyOf"])
    if "enum" in node:
        return " or ".join(f"`{json.dumps(value)}`" for value in node["enum"])
    kind = node.get("type")
    if kind == "array":
        if "prefixItems" in node:
            text = "[" + ", ".join(_type(item) for item in node["prefixItems"]) + "]"
        else:
            text = f"array of {_type(node['items'])}"
    elif kind == "object":
        keys = node.get("propertyNames", {}).get("pattern")
        text = f"object {{{f'key matching `{keys}`' if keys else 'string'}: {_type(node['additionalProperties'])}}}"
    else:
        text = str(kind)
    limits = []
    for key, template in (
        ("minimum", "≥ {}"),
        ("maximum", "≤ {}"),
        ("minLength", "length ≥ {}"),
        ("maxLength", "length ≤ {}"),
        ("minItems", "≥ {} items"),
        ("maxItems", "≤ {} items"),
        ("pattern", "matching `{}`"),
    ):
        if key in node and not (
            kind == "array" and "prefixItems" in node and key in ("minItems", "maxItems")
        ):
            limits.append(template.format(node[key]))
    return f"{text} ({', '.join(limits)})" if limits else text


def _descriptions(node: dict[str, Any]) -> list[str]:
    found = [str(node["description"])] if "description" in node else []
    for option in node.get("anyOf", []):
        found.extend(_descriptions(option))
    if isinstance(node.get("items"), dict):
        found.extend(_descriptions(node["items"]))
    return found


def _prose(text: str) -> str:
    """A docstring as Markdown paragraphs (msgspec keeps the source indentation)."""
    paragraphs = re.split(r"\n\s*\n", text)
    return "\n\n".join(" ".join(line.strip() for line in paragraph.splitlines()) for paragraph in paragraphs)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _section(name: str, node: dict[str, Any], direction: str | None) -> list[str]:
    lines = [f"### {name}", ""]
    if direction:
        lines += [f"**Direction:** {direction}", ""]
    if name in _EXTENSIONS:
        lines += [f"**{EXTENSION}:** not in the text; a client of the seed protocol never meets it.", ""]
    if "title" in node and node["title"] != name:
        lines += [_prose(str(node["title"])), ""]
    if "description" in node:
        lines += [_prose(str(node["description"])), ""]
    properties: dict[str, Any] = node.get("properties", {})
    required = set(node.get("required", []))
    fields = [(key, value) for key, value in properties.items() if key != "type"]
    if fields:
        lines += ["| Field | Type | Required / default | Notes |", "|---|---|---|---|"]
        for key, value in fields:
            presence = "required" if key in required else f"default `{json.dumps(value.get('default'))}`"
            notes = " ".join(dict.fromkeys(_descriptions(value)))
            lines.append(f"| `{key}` | {_cell(_type(value))} | {presence} | {_cell(notes)} |")
        lines.append("")
    else:
        lines += ["No fields besides `type`.", ""]
    cited = sorted(
        set(re.findall(r"\bS(\d{1,2})\b", json.dumps(node))), key=int
    )  # every decision the declaration cites
    rows = sorted(set(re.findall(r"row (\d+)", json.dumps(node))), key=int)
    follows = [f"S{number}" for number in cited] + [f"row {row}" for row in rows]
    if follows:
        lines += [f"**Follows:** {', '.join(follows)}", ""]
    return lines


def markdown() -> str:
    """The protocol reference, rendered from schema(), then the sequence examples the service
    itself produces (examples.py)."""
    document = schema()
    defs: dict[str, Any] = document["$defs"]
    client = _refs(defs["ClientMessage"])
    server = _refs(defs["ServerMessage"])
    both = [name for name in client if name in server]
    groups = (
        ("Client to server", "client → server", [name for name in client if name not in both]),
        ("Both ways", "both ways (client → server and server → client)", both),
        ("Server to client", "server → client", [name for name in server if name not in both]),
    )
    messages = {name for _title, _direction, names in groups for name in names}
    structures = sorted(
        name for name in defs if name not in messages and name not in ("ClientMessage", "ServerMessage")
    )
    lines = [_HEADER, "## Contents", ""]
    for title, _direction, names in groups:
        lines.append(
            f"- {title} ({len(names)}): " + ", ".join(f"[{name}](#{_anchor(name)})" for name in names)
        )
    lines += ["- Structures: " + ", ".join(f"[{name}](#{_anchor(name)})" for name in structures)]
    extended = [name for name in client + server if name in _EXTENSIONS]
    lines += [f"- {EXTENSION}s: " + ", ".join(f"[{name}](#{_anchor(name)})" for name in extended), ""]
    for title, direction, names in groups:
        lines += [f"## {title}", ""]
        for name in names:
            lines += _section(name, defs[name], direction)
    lines += ["## Structures", "", "Nested objects; they carry no `type`.", ""]
    for name in structures:
        lines += _section(name, defs[name], None)
    # Imported here: the examples run the service, which the schema alone does not need.
    from parlour.protocols.async_ws.reference.examples import render

    lines += [render()]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> None:
    """Print the protocol reference (see REGENERATE)."""
    sys.stdout.write(markdown())


if __name__ == "__main__":
    main()
