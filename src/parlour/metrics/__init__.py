"""Operational metrics: ``tally`` (what the hot path records, imported by the transports),
``kinds`` (message types as labels), ``collector`` (``/metrics`` in Prometheus' text format).

Nothing is imported here, so that a transport importing :mod:`parlour.metrics.tally` does not
pull in the services or prometheus-client."""
