"""API token authentication: django-rest-knox's (tokens stored as digests, with an expiry),
under the scheme name the published schema has always used (``tokenAuth``)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from knox.auth import TokenAuthentication as KnoxTokenAuthentication


class TokenAuthentication(KnoxTokenAuthentication):
    """``Authorization: Token <token>``; an expired or revoked token is a 401."""


class TokenScheme(OpenApiAuthenticationExtension):
    target_class = "tournaments.api.authentication.TokenAuthentication"
    name = "tokenAuth"
    priority = 1

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix="Token"
        )
