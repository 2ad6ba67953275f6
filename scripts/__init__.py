"""Developer scripts: the ``make run`` supervisor and helpers the tests share with it."""
