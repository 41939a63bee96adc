"""What goes on the wire of /async: every message, declared once (messages.py; S1, S2), and the
limits and timers the protocol sets (limits.py; S5, S8, S11).

The lowest package of /async: it imports nothing of the others, and all of them may import it
(docs/DESIGN.md, "The /async packages").
"""
