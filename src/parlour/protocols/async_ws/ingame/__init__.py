"""The requests of a started /async game, routed to the game (game/machine.py): turns, clocks,
forfeits, outcomes and their confirmations (play.py); simultaneous turns, interruptions and
multicast (phase_requests.py); and an admin's abort of a live game (aborts.py). The same handlers
run on one server's hub and on the owner of a cluster's shard.

It imports players/, state/, game/ and wire/ of /async (docs/DESIGN.md, "The /async packages").
"""
