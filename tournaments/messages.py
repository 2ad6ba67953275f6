"""Error messages users see, as named constants so views, services and tests share one wording."""

VALIDATION_FAILED = "Some fields are invalid; see errors."
NOT_FOUND = "Not found."
SERVER_ERROR = "Something went wrong on our side; please try again later."

USERNAME_TAKEN = "This username is already taken."
INVALID_CREDENTIALS = "Wrong username or password."
USERNAME_RESERVED = "This username is reserved for the arena's own accounts; choose another."
TOKEN_NOT_FOUND = "You have no API token with this id."

# Request bodies the API cannot take (tournaments/api/parsers.py, tournaments/api/errors.py).
JSON_INVALID = "The request body is not valid JSON (line {line}, column {column})."
JSON_TOO_DEEP = "The request body is nested more than {depth} levels deep."
BODY_TOO_LARGE = "The request body is larger than {limit} bytes."
UNSUPPORTED_MEDIA_TYPE = (
    "Send the request body as JSON (Content-Type: application/json), not {media_type}."
)
BAD_REQUEST = "The request is malformed."
# An Authorization header we do not read (tournaments/api/errors.py): its scheme, then the fix.
AUTH_SCHEME = (
    "The Authorization scheme here is Token, not {scheme}: send "
    "'Authorization: Token <key>' with the key from POST /api/auth/token/."
)
# The broker (Redis) holding the queue of matches is unreachable (services/league_states.py).
QUEUE_UNAVAILABLE = (
    "The match queue is unreachable right now, so nothing was changed; try again in a minute."
)
# /metrics from outside ESCOBA_METRICS_NETWORKS without its token (tournaments/api/metrics.py).
METRICS_FORBIDDEN = (
    "The metrics are for the arena's operator: ask from the operator's network or send its token."
)
METRICS_METHOD = "The metrics are read with GET."
