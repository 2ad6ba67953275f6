"""Sign-up, token and "who am I" endpoints, and an owner's list and revocation of tokens."""

from django.core.exceptions import ObjectDoesNotExist
from drf_spectacular.utils import extend_schema
from knox.models import AuthToken
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments import messages
from tournaments.api.errors import ErrorSerializer
from tournaments.api.throttling import AuthThrottle, SignupThrottle
from tournaments.selectors.accounts import tokens_of_user
from tournaments.services.accounts import (
    account_register,
    account_token_obtain,
    token_revoke,
    token_revoke_all,
)

ERRORS = {401: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer}


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, trim_whitespace=False, write_only=True)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(
        help_text="Send as `Authorization: Token <token>`. Shown this once: only a digest is "
        "stored. Expires after ESCOBA_API_TOKEN_TTL_DAYS days."
    )


class TokenInfoSerializer(serializers.Serializer):
    id = serializers.CharField(
        source="token_key", help_text="The token's first characters: enough to name it."
    )
    created = serializers.DateTimeField()
    expires = serializers.DateTimeField(source="expiry", allow_null=True)
    current = serializers.SerializerMethodField(
        help_text="Whether this request was made with this token."
    )

    def get_current(self, token: AuthToken) -> bool:
        auth = self.context["request"].auth
        return isinstance(auth, AuthToken) and auth.digest == token.digest


class RevokedSerializer(serializers.Serializer):
    revoked = serializers.IntegerField()


class AccountSerializer(serializers.Serializer):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


class _CredentialsView(APIView):
    """Takes username and password: no session (so no CSRF), throttled per client address."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [AuthThrottle]

    def credentials(self, request: Request) -> dict:
        serializer = CredentialsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


class RegisterView(_CredentialsView):
    throttle_classes = [AuthThrottle, SignupThrottle]

    @extend_schema(
        request=CredentialsSerializer,
        responses={201: TokenSerializer, 400: ErrorSerializer, 429: ErrorSerializer},
        summary="Create an account and get its API token",
    )
    def post(self, request: Request) -> Response:
        issued = account_register(**self.credentials(request))
        return Response({"token": issued.key}, status=status.HTTP_201_CREATED)


class TokenView(_CredentialsView):
    @extend_schema(
        request=CredentialsSerializer,
        responses={200: TokenSerializer, 400: ErrorSerializer, 429: ErrorSerializer},
        summary="Get a new API token for an account",
        description="Each call makes a new token (earlier ones stay valid until they expire or "
        "are revoked; an account keeps ESCOBA_API_TOKENS_PER_USER, the oldest dropped first).",
    )
    def post(self, request: Request) -> Response:
        issued = account_token_obtain(**self.credentials(request))
        return Response({"token": issued.key})


class MeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: AccountSerializer, 401: ErrorSerializer})
    def get(self, request: Request) -> Response:
        return Response(AccountSerializer(request.user).data)


class TokenListView(generics.ListAPIView):
    """``GET /api/auth/tokens/``: your API tokens (ids, not keys), newest first."""

    permission_classes = [IsAuthenticated]
    serializer_class = TokenInfoSerializer

    def get_queryset(self):
        return tokens_of_user(user=self.request.user)

    @extend_schema(
        summary="List your API tokens", responses={200: TokenInfoSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request) -> Response:
        return super().get(request)


class TokenRevokeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Revoke one of your API tokens", responses={204: None, **ERRORS})
    def delete(self, request: Request, token_id: str) -> Response:
        try:
            token_revoke(user=request.user, token_id=token_id)
        except ObjectDoesNotExist:
            raise NotFound(messages.TOKEN_NOT_FOUND) from None
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenRevokeAllView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        summary="Revoke every API token of yours",
        responses={200: RevokedSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        return Response({"revoked": token_revoke_all(user=request.user)})
