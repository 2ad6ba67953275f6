"""Forms of the browser pages. They only check shape; the services decide what is allowed.

After a failed submit the page opens with focus on the first field in error (or, when only the
form as a whole is wrong, on the list of its errors), so a keyboard or screen reader user lands
where the problem is (WCAG 3.3.1); Django ties each field to its help and error text
(``aria-describedby``) and marks it ``aria-invalid``.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.forms import BoundField

from games.faults import DEFAULT_MAX_FAULTS, DEFAULT_TIMEOUT_MS
from tournaments import sprt

PASSWORDS_DIFFER = "The two passwords differ."


class FocusBoundField(BoundField):
    """A field whose ``autofocus`` follows the form's errors: only the first field in error has
    it on a failed submit (a field's own ``autofocus`` applies to a fresh form only)."""

    def build_widget_attrs(self, attrs: dict, widget=None) -> dict:
        attrs = super().build_widget_attrs(attrs, widget)
        if self.form.is_bound and self.form.errors:
            attrs["autofocus"] = self.name == first_invalid_field(self.form)
        return attrs


def first_invalid_field(form: forms.BaseForm) -> str | None:
    """The name of the first field (in page order) with an error, or None."""
    return next((name for name in form.fields if name in form.errors), None)


class FocusFirstErrorMixin:
    """Gives a form the ``FocusBoundField`` and tells its template where focus belongs."""

    bound_field_class = FocusBoundField

    @property
    def focus_non_field_errors(self) -> bool:
        """True when focus belongs on the form's own error list: it has errors, none a field's."""
        return bool(self.is_bound and self.errors and first_invalid_field(self) is None)


class SignupForm(FocusFirstErrorMixin, forms.Form):
    username = forms.CharField(
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
        help_text="Letters, digits and @/./+/-/_ only.",
    )
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text="At least 8 characters, not too common, not all digits.",
    )
    password_again = forms.CharField(
        label="Password (again)",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self) -> dict:
        data = super().clean()
        if data.get("password") and data.get("password") != data.get("password_again"):
            self.add_error("password_again", PASSWORDS_DIFFER)
        return data


class LoginForm(FocusFirstErrorMixin, AuthenticationForm):
    """Django's log-in form, with focus on its error after a failed attempt."""


class BotForm(FocusFirstErrorMixin, forms.Form):
    name = forms.CharField(max_length=40, help_text="Shown in rankings; unique.")
    url = forms.CharField(
        label="URL",
        max_length=500,
        widget=forms.URLInput(attrs={"placeholder": "https://mybot.example.org/"}),
        help_text="Where your bot answers escoba/1: we call GET on it now to check.",
    )
    description = forms.CharField(
        max_length=500, required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    secret = forms.CharField(
        label="Signing secret (optional)",
        max_length=100,
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
        help_text=(
            "Your bot's own Standard Webhooks secret (the whsec form), already given to the bot: "
            "then every call, the first GET included, is signed with it. Leave it empty and we "
            "make one, shown once; the first GET is then unsigned."
        ),
    )

    def clean_secret(self) -> str | None:
        """Empty means "make one" (the service's None); the service checks the rest."""
        return self.cleaned_data["secret"].strip() or None


class LeagueForm(FocusFirstErrorMixin, forms.Form):
    """A new league, as ``POST /api/leagues/`` takes it; ``rated`` only for staff.

    The rules (a free name, each bot once, enough bots for a table, the ranges, who may rate)
    are the service's, shown here field by field.
    """

    name = forms.CharField(max_length=100, widget=forms.TextInput(attrs={"autofocus": True}))
    ruleset = forms.ChoiceField(help_text="The rule preset (docs/rules.md).")
    players = forms.TypedChoiceField(
        coerce=int,
        choices=[(2, "2"), (3, "3"), (4, "4 (two partnerships)")],
        initial=2,
        help_text="Seats per table.",
    )
    games_per_pairing = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=60,
        help_text="A multiple of 2 (of 3 for 3-player games); empty: one duplicate set.",
    )
    move_timeout_ms = forms.IntegerField(label="Move timeout (ms)", initial=DEFAULT_TIMEOUT_MS)
    max_faults = forms.IntegerField(
        initial=DEFAULT_MAX_FAULTS, help_text="A seat forfeits on its fault number max_faults + 1."
    )
    rated = forms.BooleanField(
        required=False, help_text="Counts for the pool's ratings (staff only)."
    )
    bots = forms.TypedMultipleChoiceField(
        coerce=int,
        required=False,  # too few bots is the service's error, in its words
        widget=forms.CheckboxSelectMultiple,
        help_text="Active, healthy bots, each once: at least 2 (3 for 3-player games).",
    )

    def __init__(
        self, *args, bots: list[tuple[int, str]], rulesets: list[str], staff: bool, **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["bots"].choices = bots
        self.fields["ruleset"].choices = [(name, name) for name in rulesets]
        if not staff:
            del self.fields["rated"]
            # The quotas of users' leagues (services.quotas), said where they apply.
            self.fields["bots"].help_text += f" At most {settings.ESCOBA_LEAGUE_MAX_BOTS}."
            self.fields["games_per_pairing"].help_text += (
                f" At most {settings.ESCOBA_LEAGUE_MAX_GAMES_PER_PAIRING}, and"
                f" {settings.ESCOBA_LEAGUE_MAX_GAMES} games in the whole league."
            )
            self.fields[
                "move_timeout_ms"
            ].help_text = f"At most {settings.ESCOBA_LEAGUE_MAX_MOVE_TIMEOUT_MS}."


class RankingFilterForm(forms.Form):
    """The pool switcher and search box of the rankings page (a GET form)."""

    pool = forms.ChoiceField(required=False)
    q = forms.CharField(label="Search bots", required=False, max_length=40)

    def __init__(self, *args, pools: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["pool"].choices = [(pool, pool) for pool in pools]


class ChallengeForm(FocusFirstErrorMixin, forms.Form):
    """Challenge a bot: which of your bots, how many sets (the services check the rest)."""

    bot = forms.TypedChoiceField(label="Your bot", coerce=int)
    sets = forms.IntegerField(
        min_value=1, max_value=10, initial=2, help_text="Duplicate sets of two games: 1 to 10."
    )

    def __init__(self, *args, bots: list, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["bot"].choices = [(bot.pk, bot.name) for bot in bots]


class VersionTestForm(FocusFirstErrorMixin, forms.Form):
    """Test a version: the SPRT's hypotheses and error rates (docs/ladder.md)."""

    candidate = forms.TypedChoiceField(coerce=int, help_text="Your new version.")
    baseline = forms.TypedChoiceField(
        coerce=int, help_text="Your old version, or any bot that accepts challenges."
    )
    elo0 = forms.FloatField(label="H0: Elo at most", initial=sprt.DEFAULTS["elo0"])
    elo1 = forms.FloatField(label="H1: Elo at least", initial=sprt.DEFAULTS["elo1"])
    alpha = forms.FloatField(
        initial=sprt.DEFAULTS["alpha"], help_text="Chance of accepting H1 when H0 holds."
    )
    beta = forms.FloatField(
        initial=sprt.DEFAULTS["beta"], help_text="Chance of accepting H0 when H1 holds."
    )
    max_sets = forms.IntegerField(
        label="At most this many sets", min_value=1, initial=sprt.DEFAULTS["max_sets"]
    )

    def __init__(self, *args, candidates: list, baselines: list, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["candidate"].choices = [(bot.pk, bot.name) for bot in candidates]
        self.fields["baseline"].choices = [(bot.pk, bot.name) for bot in baselines]
