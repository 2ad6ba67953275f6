"""Schemathesis against our own OpenAPI schema, signed in as two different users.

Every operation of the schema gets generated requests, schema-valid ones and schema-violating
ones (wrong types, strings with NUL bytes and odd unicode, huge and negative numbers, missing and
extra fields); each answer must not be a 5xx and must match the status codes, content type and
body schema the schema documents. Not checked: that every schema-valid request is accepted
(rules the schema cannot state, such as a password too like the username or a bot URL that does
not answer, rightly refuse some with a 400), nor that every schema-violating one is refused (an
empty query parameter counts as absent, on purpose). The two users each own a bot and a
league, so owner-only and creator-only paths are taken as well as refused. Registration and URL
changes would call bot URLs: the ``loopback_only`` guard makes any URL but loopback unreachable.
"""

import itertools

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from knox.models import AuthToken
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from tournaments.services.league_creation import league_create

MAX_EXAMPLES = 15


@pytest.fixture
def api_schema(db):
    """The schema, served by our WSGI application as in production.

    Django closes the database connection at the end of each request; inside a test that is the
    connection holding the test's transaction, so, as Django's own test client does, the
    requests here keep it open.
    """
    from config.wsgi import application

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/schema/", application)
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def tokens(user, other_user, make_bot) -> dict[str, str]:
    for owner in (user, other_user):
        bot = make_bot("greedy", owner=owner)
        league_create(creator=owner, name=f"{owner.username}'s", bot_ids=[bot.id])
    return {u.username: AuthToken.objects.create(user=u)[1] for u in (user, other_user)}


@pytest.fixture(autouse=True)
def _no_throttling(settings):
    """Throttling has its own tests; here it would only turn the fuzzer's requests into 429s."""
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}


# About 3,000 requests: 60-120 s at a load average of 5-15 on the 2-core machine. The default
# 120 s cut it off mid-example, which Hypothesis then reports as an inconsistent failure.
@pytest.mark.timeout(600)
def test_api_answers_follow_the_schema_and_never_fail(api_schema, tokens, loopback_only):
    failures: dict[str, str] = {}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) > 20, "the schema lost its operations"

    for operation, mode in itertools.product(operations, GenerationMode):

        @given(case=operation.as_strategy(mode))
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def check(case) -> None:
            for token in tokens.values():
                case.call_and_validate(
                    headers={"Authorization": f"Token {token}"},
                    excluded_checks=[positive_data_acceptance, negative_data_rejection],
                )

        try:
            check()
        except Unsatisfiable:
            continue  # nothing to break: the operation takes no parameters and no body
        except (Exception, BaseExceptionGroup) as error:  # report every operation's failure
            failures[f"{operation.label} ({mode.value})"] = str(error)[:2000]
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())
