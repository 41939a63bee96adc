"""Started /async games placed on shards in a cluster (docs/cluster.md, "Placement"): what the
hub and the owners of its shards say to each other, each node's directory of accounts and the
router of in-game requests (placement.py); the hub's side, which places games and hears from
them (hub_placement.py); and the owner of one shard, which runs its games (shard.py).

It imports lobby/, ingame/, players/, state/, game/ and wire/ of /async (docs/DESIGN.md, "The
/async packages"); the nodes, leases and the bus themselves are parlour.cluster's.
"""
