"""Which tests leave `make test-fast`, and why: the tiers of the README's "Tests" section.

`make test-fast` runs `-m "not integration and not browser and not postgres and not slow"`.
`tests/conftest.py` marks each collected test by `mark_tiers`:

- `browser`: every test under tests/browser (Chromium);
- `slow`: a test that asks for a fixture starting a process (a redis-server, a Celery worker, a
  web server), or that is listed below: it runs a program in a subprocess or takes seconds.

A test marked `integration` or `postgres` by its own module keeps that mark.

`make test` runs the suite under pytest-xdist, one test module per worker at a time
(`--dist loadfile --no-loadscope-reorder`), in the order collected: `longest_first` puts the
modules that take longest first (`LONGEST`, their seconds on one worker), so the last modules a
worker takes are short ones and no worker is left with a long tail while the others idle.
"""

from __future__ import annotations

import pytest

# Fixtures that start a process of their own (directly or through another fixture).
PROCESS_FIXTURES = frozenset({"redis_url", "celery_worker_factory", "celery_worker_process"})

# Tests (a node id, or the prefix of one: a module) that start processes themselves or take
# seconds, with the reason.
SLOW: dict[str, str] = {
    "tests/bots/test_tls.py::test_tls_uses_the_host_name": "openssl makes a certificate",
    "tests/bots/test_tls.py::test_a_certificate_for_another_name": "openssl makes a certificate",
    "tests/engine/test_engine_benchmark.py": "runs benchmarks/engine.py on both builds",
    "tests/engine/test_engine_builds.py::test_both_builds_write": "a process per build",
    "tests/engine/test_engine_builds.py::test_the_pure_build_runs": "a Python without Cython",
    "tests/engine/test_engine_cli.py::test_module_entry_point": "python -m games",
    "tests/engine/test_engine_play_random.py::test_plays_whose_moves": "a fresh process",
    "tests/foundation/test_celery.py": "Celery's own configuration in a fresh process",
    "tests/foundation/test_project_files.py::test_the_image_referees": "a build script's process",
    "tests/foundation/test_settings.py::test_production_refuses": "settings loaded in a process",
    "tests/foundation/test_settings.py::test_production_defaults": "settings loaded in a process",
    "tests/foundation/test_settings.py::test_local_defaults": "settings loaded in a process",
    "tests/foundation/test_settings.py::test_environment_overrides": "settings loaded in a process",
    "tests/foundation/test_tiers.py::test_make_test_fast_leaves": "pytest collecting in a process",
    "tests/ladder/test_ladder_service.py::test_beat_ticks": "celery beat's schedule",
    "tests/leagues/test_game_diagnostics.py": "plays a league and runs the engine's CLI",
    "tests/live/": "uvicorn in its own process",
    "tests/operations/test_metrics.py::test_a_network_that_is_not": "django.setup() in a process",
    "tests/reliability/": "kills and restarts workers, Redis and games",
    "tests/sdk/test_sdk_check.py::test_cli_check": "the SDK's CLI in a process",
    "tests/sdk/test_sdk_cli.py": "the SDK's CLI and served bots in processes",
    "tests/sdk/test_sdk_league.py::test_progress_goes_to_stderr": "the SDK's CLI in a process",
    "tests/sdk/test_sdk_examples.py": "duels of 40 and 100 whole games between the example bots",
    "tests/sdk/test_sdk_search.py": "searches against time budgets, a benchmark's processes",
    "tests/sdk/test_sdk_server.py": "served bots timed on loopback",
    "tests/security/test_deployment.py::test_production_refuses": "settings in a process",
    "tests/security/test_deployment.py::test_without_a_named_proxy": "settings in a process",
    "tests/security/test_deployment.py::test_a_named_proxy": "settings in a process",
    "tests/security/test_hostile_requests.py::test_the_trusted_proxy": "settings in a process",
    "tests/security/test_hostile_requests.py::test_hostile_bodies": "settings in a process",
    "tests/starters/": "the Node.js starter in node",
    # Seconds each: whole leagues, ladders and rating fits played through the services, data
    # migrations run back and forth, schema fuzzing, query counts on grown databases.
    "tests/bots/test_deadlines.py": "stalls event loops for seconds and times what follows",
    "tests/ladder/": "ladder sets, challenges and version tests played and rated",
    "tests/leagues/": "leagues played, stored and rated; data migrations",
    "tests/notifications/test_notification_delivery.py": "webhooks retried against a receiver",
    "tests/performance/": "query counts and read shapes on grown databases",
    "tests/ratings/test_ratings_publish.py": "rating fits published from many sets",
    "tests/ratings/test_pair_totals.py": "Hypothesis over rated sets in the database",
    "tests/ratings/test_rated_play.py": "leagues played and rated",
    "tests/ratings/test_rescore_migration.py": "a data migration run back and forth",
    "tests/security/test_api_fuzz.py": "Schemathesis over every API operation",
    "tests/security/test_hostile_urls_league.py": "leagues of hostile bot addresses",
}


# The test modules that take longest on one xdist worker, in seconds (`pytest --durations`, summed
# per module), so `longest_first` starts them first. Rough figures: only their order matters.
LONGEST: dict[str, int] = {
    "tests/foundation/test_run_script.py": 150,
    "tests/browser/test_accessibility.py": 140,
    "tests/sdk/test_sdk_cli.py": 90,
    "tests/reliability/test_redis_kills.py": 85,
    "tests/reliability/test_ladder_crashes.py": 75,
    "tests/browser/test_pages.py": 75,
    "tests/reliability/test_fair_queues.py": 70,
    "tests/reliability/test_service_restarts.py": 65,
    "tests/browser/test_live_game.py": 65,
    "tests/security/test_api_fuzz.py": 60,
    "tests/reliability/test_worker_crashes.py": 60,
    "tests/reliability/test_redis_restart.py": 55,
    "tests/ladder/test_make_run.py": 50,
    "tests/browser/test_accessibility_live.py": 50,
    "tests/play/test_play_api.py": 40,
    "tests/live/test_live_streams.py": 40,
    "tests/ladder/test_version_tests_api.py": 40,
    "tests/browser/test_rating_pages.py": 35,
    "tests/performance/test_read_cache.py": 30,
    "tests/leagues/test_league_worker.py": 30,
    "tests/reliability/test_misbehaving_league.py": 30,
    "tests/foundation/test_run_signals.py": 27,
    "tests/ladder/test_fresh_deals.py": 25,
    "tests/leagues/test_rating_concurrency.py": 25,
    "tests/reliability/test_ladder_blip.py": 25,
    "tests/browser/test_ladder_pages.py": 25,
    "tests/leagues/test_compact_logs_migration.py": 25,
    "tests/leagues/test_game_log_migration.py": 25,
    "tests/play/test_play_worker.py": 20,
    "tests/browser/test_play_page.py": 20,
    "tests/browser/test_author_replay.py": 20,
    "tests/reliability/test_match_admission.py": 20,
}


def longest_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: the modules of `LONGEST`, longest first, then every other
    module in collection order; a module's own tests keep their order."""

    def weight(item: pytest.Item) -> int:
        return -LONGEST.get(item.nodeid.split("::", 1)[0], 0)

    items.sort(key=weight)  # stable: ties keep their order


def mark_tiers(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith("tests/browser/"):
            item.add_marker(pytest.mark.browser)
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & PROCESS_FIXTURES or any(item.nodeid.startswith(key) for key in SLOW):
            item.add_marker(pytest.mark.slow)
