"""Sans-I/O protocol adapters: wire text <-> core requests and events, one package per protocol."""
