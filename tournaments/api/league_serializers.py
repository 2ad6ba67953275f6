"""Serializers of leagues, matches, games and rankings: input checks and output shapes only."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from games.engine import DEFAULT_PRESET
from games.faults import DEFAULT_MAX_FAULTS, DEFAULT_TIMEOUT_MS
from tournaments import observers
from tournaments.models import Game, League, Match, Rating, RatingPoint, Seat
from tournaments.services.league_creation import league_create_errors

ERROR_RULESET_SHAPE = 'Give a preset name, or {"name": preset, "options": {...}}.'


class BotRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


def _named(league: League, in_play: bool) -> bool:
    """Whether a game or set of ``league`` may name its bots (tournaments/observers.py): not
    while rated play is under way."""
    return not (in_play and observers.league_plays_anonymously(league))


class RulesetInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=40, default=DEFAULT_PRESET)
    options = serializers.DictField(required=False, default=dict)

    def to_internal_value(self, data):
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            raise serializers.ValidationError(ERROR_RULESET_SHAPE)
        return super().to_internal_value(data)


class LeagueCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    ruleset = RulesetInputSerializer(required=False, help_text="A preset name and its options.")
    players = serializers.ChoiceField(
        choices=[2, 3, 4], default=2, help_text="Seats per table; 4 means two partnerships."
    )
    games_per_pairing = serializers.IntegerField(
        min_value=1,
        max_value=60,
        required=False,
        help_text=(
            "A multiple of 2 (of 3 for 3-player leagues); default one duplicate set. Users' "
            "leagues have quotas (ESCOBA_LEAGUE_MAX_GAMES_PER_PAIRING, ESCOBA_LEAGUE_MAX_GAMES)."
        ),
    )
    move_timeout_ms = serializers.IntegerField(
        default=DEFAULT_TIMEOUT_MS,
        help_text="Users' leagues: at most ESCOBA_LEAGUE_MAX_MOVE_TIMEOUT_MS.",
    )
    max_faults = serializers.IntegerField(
        default=DEFAULT_MAX_FAULTS, help_text="A seat forfeits on its fault number max_faults + 1."
    )
    rated = serializers.BooleanField(
        default=False,
        help_text="Counts for the pool's ratings: staff only, with bots in rated play.",
    )
    bots = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        max_length=200,
        default=list,
        help_text=(
            "Ids of the bots to enter (any active, healthy bots: another user's only if it "
            "accepts challenges, and with move_timeout_ms at least rated play's), each once: at "
            "least enough for one table (2, or 3 for 3-player leagues). Owners may enrol more "
            "later. Users'"
            "leagues: at most ESCOBA_LEAGUE_MAX_BOTS bots."
        ),
    )

    # The rules a request must pass are the service's (the browser form checks the same ones).
    def validate(self, attrs: dict) -> dict:
        errors = league_create_errors(
            name=attrs["name"], players=attrs.get("players", 2), bot_ids=attrs.get("bots", [])
        )
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class EntryCreateSerializer(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1, max_value=2**63 - 1)


# The attribute the leagues API prefetches each league's bots into (a list, no queryset each).
BOTS = "bot_list"


class LeagueSerializer(serializers.ModelSerializer):
    creator = serializers.CharField(source="creator.username")
    bots = serializers.SerializerMethodField()

    class Meta:
        model = League
        fields = [
            "id",
            "name",
            "creator",
            "status",
            "ruleset",
            "pool",
            "players",
            "games_per_pairing",
            "move_timeout_ms",
            "max_faults",
            "rated",
            "kind",
            "bots",
            "games_planned",
            "created_at",
            "started_at",
            "finished_at",
        ]

    @extend_schema_field(BotRefSerializer(many=True))
    def get_bots(self, league: League) -> list[dict]:
        bots = getattr(league, BOTS, None)
        bots = league.bots.all() if bots is None else bots
        return [{"id": bot.id, "name": bot.name} for bot in bots]


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Games finished or aborted.")
    total = serializers.IntegerField(
        help_text="Games scheduled so far: a league's schedule is written in batches after it "
        "starts, up to its games_planned."
    )
    aborted = serializers.IntegerField(help_text="Games stopped at the match time limit.")
    faults = serializers.IntegerField(help_text="Bot faults in the finished games.")


class StandingSerializer(serializers.Serializer):
    bot_id = serializers.IntegerField()
    bot = serializers.CharField()
    points = serializers.FloatField(help_text="1 per game won, ½ per draw.")
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    draws = serializers.IntegerField()
    losses = serializers.IntegerField()
    points_for = serializers.IntegerField(help_text="Game points made.")
    points_against = serializers.IntegerField(help_text="Game points the opponents made.")
    faults = serializers.IntegerField()
    sets_won = serializers.IntegerField(help_text="Duplicate sets won (same deals, seats swapped).")
    sets_drawn = serializers.IntegerField()
    sets_lost = serializers.IntegerField()
    rating = serializers.FloatField(
        allow_null=True,
        help_text="The bot's published rating in the pool (its current version's), if any.",
    )
    provisional = serializers.BooleanField(
        allow_null=True, help_text="Whether that rating is still provisional."
    )


class LeagueDetailSerializer(LeagueSerializer):
    """A league with its progress and standings, which the view computes and passes in context."""

    progress = serializers.SerializerMethodField()
    standings = serializers.SerializerMethodField()

    class Meta(LeagueSerializer.Meta):
        fields = [*LeagueSerializer.Meta.fields, "progress", "standings"]

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, league: League) -> dict:
        return self.context["progress"]

    @extend_schema_field(StandingSerializer(many=True))
    def get_standings(self, league: League) -> list[dict]:
        return StandingSerializer(self.context["standings"], many=True).data


@extend_schema_field(
    {
        "type": "array",
        "description": "null on the diagonal: a bot does not play itself.",
        "items": {
            "type": "object",
            "nullable": True,
            "properties": {"score": {"type": "number"}, "games": {"type": "integer"}},
            "required": ["score", "games"],
        },
    }
)
class CrosstableCellsField(serializers.ListField):
    """A crosstable row's cells, {score, games} each (written inline: the cells may be null)."""


class CrosstableRowSerializer(serializers.Serializer):
    bot = serializers.IntegerField()
    cells = CrosstableCellsField()


class CrosstableSerializer(serializers.Serializer):
    bots = BotRefSerializer(many=True)
    rows = CrosstableRowSerializer(many=True, help_text="rows[i].cells[j]: bot i against bot j.")


class GameBriefSerializer(serializers.ModelSerializer):
    seating = serializers.SerializerMethodField(
        help_text="Bot id by seat; null per seat while a rated game is played."
    )

    class Meta:
        model = Game
        fields = ["id", "number", "status", "seating", "winner", "totals", "reason"]

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField(allow_null=True)))
    def get_seating(self, game: Game) -> list[int | None]:
        in_play = game.status == Game.Status.PENDING and game.match.sealed
        if _named(game.match.league, in_play):
            return list(game.seating)
        return [None] * len(game.seating)


class MatchSerializer(serializers.ModelSerializer):
    bots = serializers.SerializerMethodField(
        help_text="The set's bots; empty while a rated set is played (nobody is told who meets)."
    )
    games = GameBriefSerializer(many=True, read_only=True)
    seed = serializers.SerializerMethodField(
        help_text="The set's deals; null while the set is pending or being played."
    )

    class Meta:
        model = Match
        fields = [
            "id",
            "league",
            "number",
            "round",
            "seed",
            "status",
            "attempts",
            "bots",
            "games",
            "started_at",
            "finished_at",
        ]

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_seed(self, match: Match) -> int | None:
        return None if match.sealed else match.seed

    @extend_schema_field(BotRefSerializer(many=True))
    def get_bots(self, match: Match) -> list[dict]:
        if not _named(match.league, match.sealed):
            return []
        return [{"id": bot.id, "name": bot.name} for bot in match.bots.all()]


class SeatSerializer(serializers.ModelSerializer):
    bot = BotRefSerializer(
        read_only=True, allow_null=True, help_text="null while a rated game is played."
    )

    class Meta:
        model = Seat
        fields = [
            "seat", "team", "bot", "moves", "faults", "fault_kinds", "no_show",
            "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_max_ms",
        ]  # fmt: skip


class ResultSerializer(serializers.Serializer):
    winner = serializers.IntegerField(allow_null=True, help_text="Winning team; null: no winner.")
    totals = serializers.ListField(child=serializers.IntegerField(), help_text="Points by team.")
    reason = serializers.CharField()
    forfeit_seat = serializers.IntegerField(allow_null=True)


class DuplicateSerializer(serializers.Serializer):
    match = serializers.IntegerField(help_text="The duplicate set: games dealt the same cards.")
    number = serializers.IntegerField(help_text="This game's place in the set.")
    of = serializers.IntegerField(help_text="Games in the set.")
    seed = serializers.IntegerField(
        allow_null=True,
        help_text="The game's deals; null while it is played or another game in play shares them.",
    )
    games = serializers.ListField(child=serializers.IntegerField(), help_text="Ids of the set.")


# The attribute the games API prefetches each game's seats into (a list: see seats_with_bots).
SEATS = "seat_list"


def game_seats(game: Game) -> list[Seat]:
    """The game's seats, prefetched into ``SEATS`` or else through ``game.seats``."""
    seats = getattr(game, SEATS, None)
    return list(game.seats.all()) if seats is None else seats


class GameSerializer(serializers.ModelSerializer):
    seats = serializers.SerializerMethodField()
    result = serializers.SerializerMethodField()
    duplicate = serializers.SerializerMethodField()
    faults = serializers.SerializerMethodField()
    no_show = serializers.SerializerMethodField()

    class Meta:
        model = Game
        fields = [
            "id",
            "league",
            "match",
            "status",
            "seats",
            "result",
            "moves",
            "faults",
            "no_show",
            "rated",
            "duplicate",
            "started_at",
            "finished_at",
        ]

    @extend_schema_field(SeatSerializer(many=True))
    def get_seats(self, game: Game) -> list[dict]:
        """The seats; while a rated game is played none names its bot (observers.game_sight)."""
        # One seat serializer for the whole answer: a ModelSerializer builds its fields from the
        # model on first use, which per game cost most of a list's CPU.
        seat = self.context.setdefault("seat_serializer", SeatSerializer())
        seats = [seat.to_representation(row) for row in game_seats(game)]
        if not observers.game_sight(game).seats_named:
            for seat in seats:
                seat["bot"] = None
        return seats

    @extend_schema_field(serializers.BooleanField())
    def get_no_show(self, game: Game) -> bool:
        """A bot never showed up (its seats say which): the game is rated for nobody."""
        return any(seat.no_show for seat in game_seats(game))

    @extend_schema_field(ResultSerializer(allow_null=True))
    def get_result(self, game: Game) -> dict | None:
        if game.status != Game.Status.FINISHED:
            return None
        return {
            "winner": game.winner,
            "totals": game.totals,
            "reason": game.reason,
            "forfeit_seat": game.forfeit,
        }

    @extend_schema_field(DuplicateSerializer)
    def get_duplicate(self, game: Game) -> dict:
        return duplicate_info(game)

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_faults(self, game: Game) -> list[dict]:
        """Every fault: seat, 1-based round and play, kind and detail."""
        return game.fault_list or []  # annotated from the log row: F("log__faults")


def duplicate_info(game: Game) -> dict:
    siblings = sorted(game.match.games.all(), key=lambda g: g.number)
    return {
        "match": game.match_id,
        "number": game.number,
        "of": len(siblings),
        "seed": game.seed if observers.game_sight(game).record_shown else None,
        "games": [g.id for g in siblings],
    }


class PlayDiagnosticsSerializer(serializers.Serializer):
    round = serializers.IntegerField(help_text="1-based round.")
    play = serializers.IntegerField(help_text="1-based play of the round (log.rounds[r].plays).")
    seat = serializers.IntegerField()
    bot = serializers.IntegerField(allow_null=True, help_text="The bot at that seat.")
    move = serializers.CharField(
        allow_null=True, help_text='The move played ("7o:3c+5e"); null: the seat forfeited here.'
    )
    latency_ms = serializers.FloatField(help_text="Time to the reply; 0 when none was sent.")
    fault = serializers.CharField(allow_null=True, help_text="Fault kind; null: no fault.")
    detail = serializers.CharField(allow_null=True, help_text="What was wrong, in our words.")
    mine = serializers.BooleanField(help_text="The bot is yours: debug and request are shown.")
    debug = serializers.CharField(
        allow_null=True, help_text="The reply's debug text (owner only; at most 2048 bytes)."
    )
    debug_truncated = serializers.BooleanField(help_text="The debug text was cut to 2048 bytes.")
    request = serializers.DictField(
        allow_null=True, help_text="The exact escoba/1 request body sent (owner only)."
    )


class GameDiagnosticsSerializer(serializers.Serializer):
    game = serializers.IntegerField()
    duplicate = DuplicateSerializer()
    faults = serializers.ListField(
        child=serializers.DictField(), help_text="Every fault: seat, round, play, kind, detail."
    )
    plays = PlayDiagnosticsSerializer(many=True, help_text="Every move request, in order.")


class RankingSerializer(serializers.ModelSerializer):
    """One bot in a pool's published ranking (the figures of ``rating_selectors.rating_row``)."""

    rank = serializers.IntegerField(help_text="Established ratings first, then provisional.")
    bot = serializers.IntegerField(source="bot_id", help_text="The bot's id.")
    name = serializers.CharField(source="bot.name")
    version = serializers.CharField(
        source="version.version", help_text="The bot version this rating belongs to."
    )
    rating = serializers.FloatField(help_text="Elo, fitted over all rated sets of the pool.")
    rating_low = serializers.FloatField(help_text="95% interval, low end.")
    rating_high = serializers.FloatField(help_text="95% interval, high end.")
    provisional = serializers.BooleanField(help_text="The interval is still wider than allowed.")
    sets = serializers.IntegerField(help_text="Rated duplicate sets played.")
    games = serializers.IntegerField(help_text="Games in those sets.")
    los_next = serializers.FloatField(
        allow_null=True,
        help_text="Likelihood of superiority over the next bot down (null for the last).",
    )
    updated_at = serializers.DateTimeField(help_text="When the pool was last fitted.")

    class Meta:
        model = Rating
        fields = [
            "rank", "bot", "name", "version", "pool", "rating", "rating_low", "rating_high",
            "provisional", "sets", "games", "los_next", "updated_at",
        ]  # fmt: skip


class RatingPointSerializer(serializers.ModelSerializer):
    """A bot version's rating after one fit of its pool."""

    version = serializers.CharField(source="version.version")
    rating = serializers.FloatField()
    rating_low = serializers.FloatField()
    rating_high = serializers.FloatField()
    at = serializers.DateTimeField(source="created_at")

    class Meta:
        model = RatingPoint
        fields = [
            "id", "fit", "pool", "version", "rating", "rating_low", "rating_high", "provisional",
            "sets", "games", "at",
        ]  # fmt: skip
