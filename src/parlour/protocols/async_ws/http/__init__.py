"""The HTTP routes of /async (HTTP JSON under ``/api/``), answered from its service: accounts,
sign-in, players and the leaderboard, with what every route shares (account_routes.py); a
player's own account (account_http.py) and profile (profile_http.py); the replays of finished
games (replay_http.py); the admin's routes (admin_http.py, admin_desk.py, admin_games.py, with
the finished games read from the store, finished_games.py); and what admins and players do to
accounts, sans I/O (account_actions.py).

The top of /async with reference/: it may import every other package of /async, and none of
them imports it (docs/DESIGN.md, "The /async packages"). What the routes need of the runtime is
declared here (``account_routes.Commits``), so that nothing here imports the transport above.
"""
