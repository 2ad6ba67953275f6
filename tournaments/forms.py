"""Forms of the browser pages. They only check shape; the services decide what is allowed."""

from django import forms

PASSWORDS_DIFFER = "The two passwords differ."


class SignupForm(forms.Form):
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


class BotForm(forms.Form):
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


class RankingFilterForm(forms.Form):
    """The pool switcher and search box of the rankings page (a GET form)."""

    pool = forms.ChoiceField(required=False)
    q = forms.CharField(label="Search bots", required=False, max_length=40)

    def __init__(self, *args, pools: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["pool"].choices = [(pool, pool) for pool in pools]


class ChallengeForm(forms.Form):
    """The Challenge button's form on a bot's page: which of your bots, how many sets."""

    bot = forms.TypedChoiceField(label="Your bot", coerce=int)
    sets = forms.IntegerField(
        min_value=1, max_value=10, initial=2, help_text="Duplicate sets of two games: 1 to 10."
    )

    def __init__(self, *args, bots: list, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["bot"].choices = [(bot.pk, bot.name) for bot in bots]


class VersionTestForm(forms.Form):
    """Test a version: the SPRT's hypotheses and error rates (docs/ladder.md)."""

    candidate = forms.TypedChoiceField(coerce=int, help_text="Your new version.")
    baseline = forms.TypedChoiceField(
        coerce=int, help_text="Your old version, or any bot that accepts challenges."
    )
    elo0 = forms.FloatField(label="H0: Elo at most", initial=0.0)
    elo1 = forms.FloatField(label="H1: Elo at least", initial=50.0)
    alpha = forms.FloatField(initial=0.05, help_text="Chance of accepting H1 when H0 holds.")
    beta = forms.FloatField(initial=0.05, help_text="Chance of accepting H0 when H1 holds.")
    max_sets = forms.IntegerField(label="At most this many sets", min_value=1, initial=1000)

    def __init__(self, *args, candidates: list, baselines: list, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["candidate"].choices = [(bot.pk, bot.name) for bot in candidates]
        self.fields["baseline"].choices = [(bot.pk, bot.name) for bot in baselines]
