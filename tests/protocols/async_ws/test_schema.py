"""The JSON Schema and the generated protocol reference (S2: they cannot drift)."""

from __future__ import annotations

import json
from pathlib import Path

from parlour.protocols.async_ws.reference.schema import REGENERATE, markdown, schema
from parlour.protocols.async_ws.wire import messages as m

DOC = Path(__file__).resolve().parents[3] / "docs" / "async-protocol.md"


def test_schema_covers_both_unions() -> None:
    document = schema()
    json.dumps(document)  # serialisable as served
    defs = document["$defs"]
    client = [ref["$ref"].rsplit("/", 1)[1] for ref in defs["ClientMessage"]["anyOf"]]
    server = [ref["$ref"].rsplit("/", 1)[1] for ref in defs["ServerMessage"]["anyOf"]]
    assert set(client) | set(server) == {cls.__name__ for cls in m.MESSAGES}
    assert set(client) & set(server) == {"PingRequest"}
    for name in client + server:
        assert defs[name]["properties"]["type"] == {"enum": [name]}
        assert defs[name]["additionalProperties"] is False
    configuration = defs["GameConfiguration"]["properties"]["max_players"]
    assert (configuration["minimum"], configuration["maximum"]) == (2, 8)


def test_reference_has_a_section_per_message() -> None:
    text = markdown()
    for cls in m.MESSAGES:
        assert f"\n### {cls.__name__}\n" in text
    assert "**Direction:** both ways" in text
    assert "`finalScores`" in text and "**Follows:**" in text


def test_doc_is_not_stale() -> None:
    assert DOC.is_file(), f"docs/async-protocol.md is missing: run {REGENERATE}"
    assert DOC.read_text(encoding="utf-8") == markdown(), f"docs/async-protocol.md is stale: run {REGENERATE}"
