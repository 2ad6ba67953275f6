"""Accounts: sign-up and API tokens, on Django's built-in User and DRF's Token."""

from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework.authtoken.models import Token

from tournaments import messages


@transaction.atomic
def account_register(*, username: str, password: str) -> Token:
    """Create a user and its API token; ``ValidationError`` lists every problem by field.

    The password goes through ``AUTH_PASSWORD_VALIDATORS`` with the would-be user, so the
    similarity check can compare it with the username.
    """
    user_model = get_user_model()
    user = user_model(username=username)
    errors: dict[str, list[str]] = {}
    try:
        user.clean_fields(exclude=["password"])
    except ValidationError as error:
        errors.update(error.message_dict)
    if "username" not in errors and user_model.objects.filter(username__iexact=username).exists():
        errors["username"] = [messages.USERNAME_TAKEN]
    try:
        validate_password(password, user=user)
    except ValidationError as error:
        errors["password"] = list(error.messages)
    if errors:
        raise ValidationError(errors)
    user.set_password(password)
    user.save()
    return Token.objects.create(user=user)


def account_token_obtain(*, username: str, password: str) -> Token:
    """Return the user's API token, creating it on first use; wrong credentials raise."""
    user = authenticate(username=username, password=password)
    if user is None:
        raise ValidationError({"non_field_errors": [messages.INVALID_CREDENTIALS]})
    token, _ = Token.objects.get_or_create(user=user)
    return token
