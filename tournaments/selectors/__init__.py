"""Reads that are more than a one-line query, one module per subject: ``leagues`` (standings,
crosstable, progress, games), ``ratings`` (the published ratings), ``ladder``, ``play``,
``accounts``, and ``pages`` (what the browser pages show). Selectors never write: no service,
task or queue (an import contract)."""
