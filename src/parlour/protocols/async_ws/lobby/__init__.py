"""The /async lobby, where games are found before they start: entering and leaving it, its lists,
open games and invitations (lobby_requests.py; joining one, leaving, starting early and answering
are rows of ingame/game_requests.py's table), quick play's queues as requests (quickplay.py),
and watching games, with the observable game list (observe.py).

It imports ingame/, players/, state/, game/ and wire/ of /async (docs/DESIGN.md, "The /async
packages"); who is in the lobby and who waits in a queue are owned in state/.
"""
