"""What the bots API accepts and shows. Input serializers check types and sizes only; the rules
(name format, unique names, a URL that answers `escoba/1`) live in `tournaments.services.bots`."""

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments.api.fields import StringField
from tournaments.models import Bot, BotCheck, BotVersion, Rating

NAME_MAX = 40
URL_MAX = 500
DESCRIPTION_MAX = 500
SECRET_MAX = 100
ERROR_NAME_TYPE = "Enter the bot's name as a string."
ERROR_URL_TYPE = 'Enter the bot\'s URL as a string, e.g. "https://bot.example.org/".'
ERROR_SECRET_TYPE = 'Enter the secret as a string, "whsec_" and base64.'
ERROR_URL_NO_SCHEME = "A bot URL starts with http:// or https://: did you mean {suggestion}?"


def url_with_scheme(value: str) -> str:
    """A URL written without its scheme (``127.0.0.1:8801``), refused with the URL it most
    likely means: http for a local or private address, https for a name (the arena's policy, in
    ``tournaments.services.bots``, still judges the URL given)."""
    if "://" in value or not value or any(c.isspace() or not c.isprintable() for c in value):
        return value
    try:
        host = urlsplit(f"http://{value}").hostname or ""
    except ValueError:
        return value
    if not host:
        return value
    try:
        local = host == "localhost" or ipaddress.ip_address(host).is_private
    except ValueError:
        local = False
    path = value if "/" in value else f"{value}/"
    suggestion = f"{'http' if local else 'https'}://{path}"
    raise serializers.ValidationError(ERROR_URL_NO_SCHEME.format(suggestion=suggestion))


class BotCreateSerializer(serializers.Serializer):
    name = StringField(max_length=NAME_MAX, message=ERROR_NAME_TYPE)
    url = StringField(max_length=URL_MAX, message=ERROR_URL_TYPE, help_text="The bot's base URL U.")
    description = serializers.CharField(
        max_length=DESCRIPTION_MAX, required=False, allow_blank=True, default=""
    )
    secret = StringField(
        max_length=SECRET_MAX,
        message=ERROR_SECRET_TYPE,
        required=False,
        help_text=(
            "Your own signing secret (whsec_ and the base64 of 24 to 64 random bytes), already "
            "given to the bot: then every call, the first GET U included, is signed with it. "
            "Without it the first GET U is unsigned and the answer carries a new secret."
        ),
    )

    def validate_url(self, value: str) -> str:
        return url_with_scheme(value)


class BotUpdateSerializer(serializers.Serializer):
    """Every field optional; a new `url` is verified again before it is saved."""

    name = StringField(max_length=NAME_MAX, message=ERROR_NAME_TYPE, required=False)
    url = StringField(max_length=URL_MAX, message=ERROR_URL_TYPE, required=False)
    description = serializers.CharField(
        max_length=DESCRIPTION_MAX, required=False, allow_blank=True
    )
    accepts_challenges = serializers.BooleanField(
        required=False, help_text="Whether other users may challenge it or test against it."
    )

    def validate_url(self, value: str) -> str:
        return url_with_scheme(value)


class RatingSerializer(serializers.ModelSerializer):
    """A published rating of one bot version in one pool, numbers as JSON numbers."""

    version = serializers.CharField(source="version.version")
    rating = serializers.FloatField()
    rating_low = serializers.FloatField()
    rating_high = serializers.FloatField()

    class Meta:
        model = Rating
        fields = [
            "pool", "version", "rating", "rating_low", "rating_high", "provisional", "rank",
            "sets", "games", "los_next",
        ]  # fmt: skip


class BotVersionSerializer(serializers.ModelSerializer):
    """A version the bot announced, with its own ratings (old versions keep theirs)."""

    current = serializers.SerializerMethodField()
    ratings = serializers.SerializerMethodField()

    class Meta:
        model = BotVersion
        fields = ["version", "current", "first_seen_at", "last_seen_at", "ratings"]

    def get_current(self, version: BotVersion) -> bool:
        return version.version == version.bot.protocol_version

    @extend_schema_field(RatingSerializer(many=True))
    def get_ratings(self, version: BotVersion) -> list[dict]:
        ratings = sorted(version.ratings.all(), key=lambda rating: rating.pool)
        return RatingSerializer(ratings, many=True).data


# What only a bot's owner sees of it.
OWNER_FIELDS = (
    "url", "check_failures", "last_checked_at", "last_latency_ms", "last_check_report",
    "protocol_name", "protocol_author", "protocol_version", "updated_at",
)  # fmt: skip


class BotPublicSerializer(serializers.ModelSerializer):
    """A bot as anyone may see it: never its URL, its checks or its secret."""

    owner = serializers.CharField(source="owner.username", read_only=True)
    version = serializers.CharField(source="protocol_version", read_only=True)
    ratings = serializers.SerializerMethodField()
    versions = BotVersionSerializer(many=True, read_only=True)
    rated_play = serializers.SerializerMethodField()

    class Meta:
        model = Bot
        fields = [
            "id", "name", "owner", "description", "status", "health", "version",
            "accepts_challenges", "ratings", "versions", "rated_play", "no_shows",
            "no_shows_in_row", "created_at",
        ]  # fmt: skip
        read_only_fields = fields

    @extend_schema_field(RatingSerializer(many=True))
    def get_ratings(self, bot: Bot) -> list[dict]:
        """The current version's rating in each pool: the one figure shown for the bot."""
        current = [r for r in bot.ratings.all() if r.version.version == bot.protocol_version]
        return RatingSerializer(sorted(current, key=lambda r: r.pool), many=True).data

    @extend_schema_field(serializers.BooleanField())
    def get_rated_play(self, bot: Bot) -> bool:
        """False while paused for no-shows in a row, until a protocol check passes."""
        return bot.rated_paused_at is None


class BotSerializer(BotPublicSerializer):
    """A bot as its owner sees it; anyone else gets the public fields only.

    The secret is never part of this view: see `BotWithSecretSerializer`.
    """

    OWNER_FIELDS = OWNER_FIELDS
    # Declared, as the model makes it read-only (auto_now) and so required in the schema.
    updated_at = serializers.DateTimeField(required=False)

    class Meta(BotPublicSerializer.Meta):
        fields = [*BotPublicSerializer.Meta.fields, *OWNER_FIELDS]
        # Only ever an output. The owner's fields are left out of `read_only_fields` so that
        # the schema can say what is true: they are absent from other users' answers.
        read_only_fields = BotPublicSerializer.Meta.fields
        extra_kwargs = {field: {"required": False} for field in OWNER_FIELDS}

    def to_representation(self, instance: Bot) -> dict[str, Any]:
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is None or instance.owner_id != request.user.pk:
            for field in self.OWNER_FIELDS:
                data.pop(field, None)
        return data


class BotWithSecretSerializer(BotSerializer):
    """The owner's view plus the signing secret: only in answers to creation and rotation."""

    class Meta(BotSerializer.Meta):
        fields = [*BotSerializer.Meta.fields, "secret"]
        read_only_fields = fields


class BotCheckSerializer(serializers.ModelSerializer):
    """One check run, with the bot's current health and count of consecutive failures."""

    health = serializers.CharField(source="bot.health", read_only=True)
    check_failures = serializers.IntegerField(source="bot.check_failures", read_only=True)

    class Meta:
        model = BotCheck
        fields = [
            "id", "trigger", "passed", "latency_ms", "report", "created_at", "health",
            "check_failures",
        ]  # fmt: skip
        read_only_fields = fields
