"""The players of /async and their social world, as requests and hooks of the hub: chat and its
commands (chat.py), presence (presence.py), buddy and ignore lists and the social side's hooks
(social.py), server statistics (statistics.py), push devices and notifications (devices.py,
notify.py), ratings (ratings.py), and what the games ask of all of them (hubhost.py, the
game/host.py interface over the hub).

It imports state/, game/ and wire/ of /async (docs/DESIGN.md, "The /async packages").
"""
