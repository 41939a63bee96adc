"""The only asyncio network code: listeners, ordered outboxes, the ticker, graceful shutdown."""
