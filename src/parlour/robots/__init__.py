"""Move choosers per game (random, greedy, search): pure functions of what a seat may see."""
