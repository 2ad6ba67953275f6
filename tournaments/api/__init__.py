"""The REST API: one module per resource, routed from ``tournaments.api.urls``."""
