"""The state of the /async service: one owner per piece (docs/DESIGN.md, "Who owns what in
/async"), and the hub that composes them and the ways it speaks (hub.py, output.py).

The owners: the accounts as the service knows them (known_accounts.py), the connections and who
is signed in on them (sessions.py), the lobby's members (lobby_members.py), quick play's queues
(matchmaking.py), the observers (observers.py), the social side's lists, chat, presence,
statistics and devices (social_state.py, with the chat's profanity filter, profanity.py and its
word list). After a failed commit, what is read back from the store (readback.py) and how each
request is then answered (refusals.py).

It imports game/ and wire/ of /async; the handlers above it reach the state through the hub
(docs/DESIGN.md, "The /async packages").
"""
