"""The games of /async, each a unit: its record and lifecycle (model.py, lifecycle.py), its rules
adapter under server rules (rules.py, server_game.py), the game itself (machine.Game: the one
owner of its state and its transitions), the helpers it makes for its jobs (outbound.py: messages
and notifications; turns.py: turns and robots; phases.py: simultaneous turns and interruption
windows; ending.py: outcome, ratings and abort), what every game shares (context.py), the checks
that turn a request into a plan or a refusal (checks.py, plans.py), what it asks of the rest of
/async (host.py), and the owner of every game (game_registry.py, with roster.py and the records
of an input, store_ledger.py).

It imports only wire/ of /async: the hub, the handlers and the cluster reach the games, never
the other way (docs/DESIGN.md, "The /async packages").
"""
