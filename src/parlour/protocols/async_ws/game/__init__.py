"""The games of /async, each a unit: its record and lifecycle (model.py, lifecycle.py), its rules
adapter under server rules (rules.py, server_game.py), its state machine (machine.py, over
base.py, ending.py, turns.py, phases.py), the checks that turn a request into a plan or a refusal
(checks.py, plans.py), what it asks of the rest of /async (host.py), and the owner of every game
(game_registry.py, with roster.py and the records of an input, store_ledger.py).

It imports only wire/ of /async: the hub, the handlers and the cluster reach the games, never
the other way (docs/DESIGN.md, "The /async packages").
"""
