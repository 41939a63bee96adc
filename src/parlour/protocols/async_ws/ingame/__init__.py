"""The requests routed to one /async game, and the requests of a started game: the table of every
request to a game, from joining it in the lobby to its turns and its end, walked by one handler
(game_requests.py); turns, clocks, forfeits, outcomes and their confirmations (play.py);
simultaneous turns, interruptions and multicast (phase_requests.py); and an admin's abort of a
live game (aborts.py). The same handlers run on one server's hub and on the owner of a cluster's
shard.

It imports players/, state/, game/ and wire/ of /async (docs/DESIGN.md, "The /async packages").
"""
