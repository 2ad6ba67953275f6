"""Sign-up, token and "who am I" endpoints."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tournaments.api.errors import ErrorSerializer
from tournaments.api.throttling import AuthThrottle, SignupThrottle
from tournaments.services.accounts import account_register, account_token_obtain


class CredentialsSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, trim_whitespace=False, write_only=True)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


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
        token = account_register(**self.credentials(request))
        return Response({"token": token.key}, status=status.HTTP_201_CREATED)


class TokenView(_CredentialsView):
    @extend_schema(
        request=CredentialsSerializer,
        responses={200: TokenSerializer, 400: ErrorSerializer, 429: ErrorSerializer},
        summary="Get the API token of an account",
    )
    def post(self, request: Request) -> Response:
        token = account_token_obtain(**self.credentials(request))
        return Response({"token": token.key})


class MeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: AccountSerializer, 401: ErrorSerializer})
    def get(self, request: Request) -> Response:
        return Response(AccountSerializer(request.user).data)
