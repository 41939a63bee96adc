"""Protocol-neutral server logic: pure, sans-I/O (no asyncio, sockets, time or global random)."""
