"""Several nodes (``--cluster redis://...``; docs/cluster.md): ownership of the stateful
services by Redis leases (lease.py, ownership.py), the shards held in fair shares (shares.py),
which nodes are alive (liveness.py), the proxy service a node puts in front of a service it
does not own (gateway.py), the notes between services and the answers awaited for them
(notes.py, awaiting.py), HTTP between nodes (calls.py), what nodes say to each other (wire.py)
over Redis (redisbus.py), and the node that ties them together (node.py).

Nothing here is imported by a single node: app.py imports the cluster's modules only when the
``cluster`` setting is set, so one node never loads Redis. This module imports nothing either.
"""

__all__: list[str] = []
