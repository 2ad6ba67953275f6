"""The arena's own account names, and names that only look like them.

The arena makes accounts for what it runs itself (``system_user``): ``ladder`` owns the rated
ladder's leagues, ``operator`` the leagues of ``manage.py league_run``, ``examples`` the example
bots, and ``make run`` creates ``admin``. A stranger holding one of those names first could stop
the ladder or own what the arena makes, and one holding ``Ladder`` or ``lаdder`` (a Cyrillic
``а``) could pass for it. So sign-up refuses every name whose *skeleton* equals a reserved one's.

The skeleton follows Unicode's confusable detection (UTS #39): NFKC, each character replaced by
the prototype it is confusable with (the Unicode ``confusables.txt`` data, from the
``confusable_homoglyphs`` package) before and after case folding, accents dropped, then the ASCII
look-alikes of ``LOOK_ALIKES`` folded
(``0``/``o``, ``1``/``i``/``l``, ``rn``/``m``, ``vv``/``w``), and the separators ``.``, ``-``, ``_``
dropped (``lad-der``).
"""

from __future__ import annotations

import functools
import unicodedata

from confusable_homoglyphs.confusables import confusables_data

# Accounts the code creates or relies on (tournaments/services/ladder.py, the league_run and
# bots_register_examples commands, scripts/run.py, benchmarks/pool_data.py), and a few names a
# visitor would read as the arena speaking.
SYSTEM_USERNAMES = (
    "ladder",
    "operator",
    "examples",
    "admin",
    "pool-data-owner",
    "administrator",
    "arena",
    "escoba",
    "moderator",
    "root",
    "staff",
    "support",
    "system",
)

# Look-alikes within ASCII that confusables.txt keeps apart, in the order they are folded.
LOOK_ALIKES = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"), ("i", "l"), ("|", "l"))
SEPARATORS = str.maketrans("", "", ".-_")


def _prototype(character: str) -> str:
    """The character this one is confusable with, when the data names exactly one."""
    entry = confusables_data.get(character)
    if entry and len(entry) == 1:
        return entry[0]["c"].strip("\u200e\u200f")
    return character


def _prototypes(text: str) -> str:
    return "".join(_prototype(character) for character in text)


def username_skeleton(name: str) -> str:
    """What ``name`` looks like, for comparing names that must not be mistaken for each other."""
    folded = _prototypes(unicodedata.normalize("NFKC", name))
    folded = _prototypes(folded.casefold())
    # Accents off: the marks left after decomposition (``admín`` is ``admin``).
    decomposed = unicodedata.normalize("NFKD", folded.casefold())
    folded = "".join(c for c in decomposed if not unicodedata.combining(c))
    for look_alike, prototype in LOOK_ALIKES:
        folded = folded.replace(look_alike, prototype)
    return folded.translate(SEPARATORS)


@functools.cache
def _reserved_skeletons() -> frozenset[str]:
    return frozenset(username_skeleton(name) for name in SYSTEM_USERNAMES)


def username_reserved(name: str) -> bool:
    """Whether ``name`` is one of the arena's own names or looks like one."""
    return username_skeleton(name) in _reserved_skeletons()
