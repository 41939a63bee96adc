"""What /async tells the people and the programs that read it, derived from its declarations and
its service: the JSON Schema and docs/async-protocol.md (schema.py), the sequence examples that
document played by the real service (examples.py), and the games and words a client reads before
it plays (catalogue.py, ``GET /api/async/catalogue``).

The top of /async with http/: it may import every other package of /async, and none of them
imports it (docs/DESIGN.md, "The /async packages"). schema.py is not imported here: it runs as
``python -m parlour.protocols.async_ws.reference.schema``, and a package that imported it first
would make runpy warn.
"""
