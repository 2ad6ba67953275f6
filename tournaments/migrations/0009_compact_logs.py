# Written for the compact logs of issue 15 (item 2) and the debug channel of issue 14 (item 6).
"""Game logs are stored gzip-compressed; each seat keeps its latency figures and faults by kind.

``GameLog.document`` (JSON) becomes ``document_gzip``, the same document as gzip JSON, served as
stored. ``GameLog.meta`` (per play: seat, latency, fault) becomes ``diagnostics_gzip``, one row
per move request in the form the runner now writes (see ``PlayCall.diagnostics``); games stored
before this have no debug text or request bodies (null). ``Seat`` gains ``latency_p50_ms``,
``latency_p95_ms`` and ``fault_kinds``, computed here from each stored log, so that no page
reads a log to draw a bot's profile. Both directions convert every stored log, in batches.
"""

import gzip
from collections import Counter, defaultdict

import orjson
from django.db import migrations, models

BATCH = 200
PUBLIC_KEYS = ("seat", "latency_ms", "fault", "detail")


def pack(value) -> bytes:
    return gzip.compress(orjson.dumps(value), compresslevel=6, mtime=0)


def unpack(data) -> object:
    return orjson.loads(gzip.decompress(bytes(data)))


def percentile(values: list[float], percent: int) -> float:
    """Nearest rank, as ``tournaments.latency.nearest_rank_percentile``."""
    return values[max(1, -(-percent * len(values) // 100)) - 1]


def move_text(play: dict) -> str:
    capture = play.get("capture") or []
    return f"{play['card']}:{'+'.join(capture)}" if capture else play["card"]


def diagnostics_of(document: dict, meta: list) -> list[dict]:
    """The old per-play rows as diagnostics rows: nothing private was kept before."""
    rows = []
    rounds = zip(document.get("rounds", []), meta or [], strict=False)
    for r, (round_log, round_meta) in enumerate(rounds):
        for p, (play, row) in enumerate(zip(round_log.get("plays", []), round_meta, strict=False)):
            rows.append(
                {
                    "round": r + 1,
                    "play": p + 1,
                    "move": move_text(play),
                    "seat": row.get("seat", play["seat"]),
                    "latency_ms": row.get("latency_ms", 0),
                    "fault": row.get("fault"),
                    "detail": row.get("detail"),
                    "debug": None,
                    "debug_truncated": False,
                    "request": None,
                }
            )
    return rows


def seat_figures(rows: list[dict], faults: list) -> dict[int, dict]:
    latencies: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        if row["latency_ms"] is not None:
            latencies[row["seat"]].append(float(row["latency_ms"]))
    kinds: dict[int, Counter] = defaultdict(Counter)
    for fault in faults or []:
        kinds[fault.get("seat")][str(fault.get("kind", "unknown"))] += 1
    figures = {}
    for seat in set(latencies) | set(kinds):
        values = sorted(latencies.get(seat, []))
        figures[seat] = {
            "latency_p50_ms": percentile(values, 50) if values else None,
            "latency_p95_ms": percentile(values, 95) if values else None,
            "fault_kinds": dict(kinds[seat].most_common()),
        }
    return figures


def compress_logs(apps, schema_editor) -> None:
    GameLog = apps.get_model("tournaments", "GameLog")
    Seat = apps.get_model("tournaments", "Seat")

    def store(batch: list) -> None:
        figures = {}
        for log in batch:
            rows = diagnostics_of(log.document, log.meta)
            log.document_gzip = pack(log.document)
            log.diagnostics_gzip = pack(rows)
            figures[log.game_id] = seat_figures(rows, log.faults)
        GameLog.objects.bulk_update(batch, ["document_gzip", "diagnostics_gzip"])
        seats = list(Seat.objects.filter(game_id__in=figures))
        for seat in seats:
            for name, value in figures[seat.game_id].get(seat.seat, {}).items():
                setattr(seat, name, value)
        Seat.objects.bulk_update(seats, ["latency_p50_ms", "latency_p95_ms", "fault_kinds"])

    logs = GameLog.objects.order_by("game_id").only("game_id", "document", "meta", "faults")
    batch = []
    for log in logs.iterator(chunk_size=BATCH):
        batch.append(log)
        if len(batch) == BATCH:
            store(batch)
            batch = []
    store(batch)


def expand_logs(apps, schema_editor) -> None:
    GameLog = apps.get_model("tournaments", "GameLog")
    batch = []
    for log in GameLog.objects.order_by("game_id").iterator(chunk_size=BATCH):
        log.document = unpack(log.document_gzip)
        meta = [[] for _ in log.document.get("rounds", [])]
        for row in unpack(log.diagnostics_gzip):
            if row["move"] is not None:
                meta[row["round"] - 1].append({key: row.get(key) for key in PUBLIC_KEYS})
        log.meta = meta
        batch.append(log)
        if len(batch) >= BATCH:
            GameLog.objects.bulk_update(batch, ["document", "meta"])
            batch = []
    GameLog.objects.bulk_update(batch, ["document", "meta"])


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0008_league_name_unique"),
    ]

    operations = [
        migrations.AddField(
            model_name="gamelog",
            name="document_gzip",
            field=models.BinaryField(
                default=b"", help_text="The escoba-log/1 document, gzip JSON."
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="gamelog",
            name="diagnostics_gzip",
            field=models.BinaryField(
                default=pack([]),
                help_text="Per move request: latency, fault, debug, request.",
            ),
        ),
        migrations.AddField(
            model_name="seat",
            name="fault_kinds",
            field=models.JSONField(default=dict, help_text="Faults by kind: {kind: count}."),
        ),
        migrations.AddField(
            model_name="seat",
            name="latency_p50_ms",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="seat",
            name="latency_p95_ms",
            field=models.FloatField(blank=True, null=True),
        ),
        # The old columns may be null while the way back fills them in.
        migrations.AlterField(
            model_name="gamelog",
            name="document",
            field=models.JSONField(null=True, help_text="The escoba-log/1 document."),
        ),
        migrations.RunPython(compress_logs, expand_logs, elidable=False),
        migrations.RemoveField(
            model_name="gamelog",
            name="document",
        ),
        migrations.RemoveField(
            model_name="gamelog",
            name="meta",
        ),
    ]
