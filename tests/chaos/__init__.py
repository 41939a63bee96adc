"""The chaos run: the whole cluster (PostgreSQL, Redis, three nodes) under seeded faults, with
a checker of the recorded history (``make chaos``; a short run is part of ``make test``).

- system.py: the processes and the faults made to them; links.py: the faulty links;
- nemesis.py: the schedule of faults, a function of the seed;
- workload.py: the players and the director of their games;
- history.py: what is recorded; checker.py: what is promised, checked; report.py: the report;
- run.py: one run, start to verdict; ``python -m tests.chaos``: the command.
"""
