"""Writes of the tournaments app, one module per area (HackSoft style ``<noun>_<verb>``)."""
