"""A game of /async as a unit: its record, its rules adapter and its state machine (machine.py),
what it asks of the rest of /async (host.py), and the checks that turn a request into a plan or
a refusal (checks.py, plans.py). See docs/DESIGN.md "A game is a unit"."""
