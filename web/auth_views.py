"""Account pages: the owner's API tokens (``/my/tokens/``: see them, make one, revoke one or
all) and the e-mail confirmation link (``/accounts/verify-email/<token>/``).

Only digests are stored (django-rest-knox), so a token's key is shown once, in the answer to
the POST that made it, and never again; rows name tokens by their first characters.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from tournaments.messages import TOKEN_NOT_FOUND
from tournaments.selectors.accounts import tokens_of_user
from tournaments.services.accounts import token_create, token_revoke, token_revoke_all
from tournaments.services.email_verification import (
    email_verification_confirm,
    email_verification_read,
)

TOKEN_REVOKED = "Token {id}… is revoked: requests sent with it are refused from now on."
TOKENS_REVOKED = "Every token of yours is revoked ({count})."


@never_cache
@login_required
def my_tokens(request: HttpRequest) -> HttpResponse:
    """GET lists the tokens; POST makes one and shows its key in this answer only."""
    new_key = None
    if request.method == "POST":
        new_key = token_create(user=request.user).key
    context = {"nav": "my_tokens", "tokens": tokens_of_user(user=request.user), "new_key": new_key}
    return render(request, "web/my_tokens.html", context)


@login_required
@require_POST
def my_token_revoke(request: HttpRequest, token_id: str) -> HttpResponse:
    try:
        token_revoke(user=request.user, token_id=token_id)
    except ObjectDoesNotExist:
        messages.error(request, TOKEN_NOT_FOUND)
    else:
        messages.success(request, TOKEN_REVOKED.format(id=token_id))
    return redirect("my_tokens")


@login_required
@require_POST
def my_tokens_revoke_all(request: HttpRequest) -> HttpResponse:
    count = token_revoke_all(user=request.user)
    messages.success(request, TOKENS_REVOKED.format(count=count))
    return redirect("my_tokens")


EMAIL_CONFIRMED = (
    "{email} is confirmed: notifications about your bots are mailed there from now on."
)


@never_cache
def verify_email(request: HttpRequest, token: str) -> HttpResponse:
    """The link we mailed: GET asks to confirm (mail scanners follow links), POST confirms."""
    context: dict = {"nav": "", "error": None, "email": None, "confirmed": False}
    try:
        if request.method == "POST":
            email_verification_confirm(token=token)
            context["confirmed"] = True
        _, context["email"] = email_verification_read(token=token)
    except ValidationError as error:
        context["error"] = " ".join(error.messages)
    if context["confirmed"]:
        context["message"] = EMAIL_CONFIRMED.format(email=context["email"])
    status = 400 if context["error"] else 200
    return render(request, "web/verify_email.html", context, status=status)
