"""Named, versioned rulesets: one preset per rule document, each option overridable.

``docs/rules.md`` maps every preset and option to the document sentence it comes from. A preset's
version changes whenever its meaning does, so a stored log always names the rules it was played
under.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .errors import RulesetError

SEVENS_CATEGORIES = ("setenta", "most", "primera", "per_suit", "none")
CAPTURE_RULES = ("forced", "optional")
COUNT_RULES = ("most", "over_half")
TIE_POLICIES = ("extra_round", "shared")

# Every option with its type and, where it is a choice, the allowed values.
OPTION_TYPES: dict[str, type] = {
    "target": int,
    "players": int,
    "teams": bool,
    "capture": str,
    "sevens": str,
    "seven_of_oros": int,
    "count_rule": str,
    "big_wins": bool,
    "all_oros": bool,
    "all_sevens": bool,
    "tie": str,
    "max_rounds": int,
}
_CHOICES: dict[str, tuple[Any, ...]] = {
    "players": (2, 3, 4),
    "capture": CAPTURE_RULES,
    "sevens": SEVENS_CATEGORIES,
    "seven_of_oros": (1, 2),
    "count_rule": COUNT_RULES,
    "tie": TIE_POLICIES,
}

_BASE: dict[str, Any] = {
    "target": 21,
    "players": 2,
    "teams": False,
    "capture": "forced",
    "sevens": "setenta",
    "seven_of_oros": 1,
    "count_rule": "most",
    "big_wins": False,
    "all_oros": False,
    "all_sevens": False,
    "tie": "extra_round",
    "max_rounds": 100,
}

# The preset of a game, league or check that names none.
DEFAULT_PRESET = "classic"
# name -> (version, options that differ from _BASE). ``teams`` of "casual" depends on players.
PRESETS: Mapping[str, tuple[int, Mapping[str, Any]]] = MappingProxyType(
    {
        "classic": (1, {}),
        "fournier": (1, {"sevens": "most"}),
        "primera": (1, {"sevens": "primera"}),
        "casual": (1, {"capture": "optional", "sevens": "most"}),
        "bonus": (1, {"sevens": "most", "all_oros": True, "all_sevens": True}),
        "del15": (1, {"sevens": "primera", "count_rule": "over_half"}),
    }
)


@dataclass(frozen=True)
class Ruleset:
    """A preset plus option values; build one with ``from_preset`` or ``from_dict``."""

    name: str
    version: int
    options: Mapping[str, Any]

    @property
    def id(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def players(self) -> int:
        return self.options["players"]

    @property
    def num_teams(self) -> int:
        return 2 if self.options["teams"] else self.options["players"]

    def team_of(self, seat: int) -> int:
        """Seats 0 and 2 are team 0, seats 1 and 3 team 1; without partnerships, seat = team."""
        return seat % 2 if self.options["teams"] else seat

    @staticmethod
    def from_preset(name: str, overrides: Mapping[str, Any] | None = None) -> Ruleset:
        """The preset ``name`` with ``overrides`` applied; ``RulesetError`` lists every problem."""
        if not isinstance(name, str) or name not in PRESETS:
            raise RulesetError([f"unknown preset {name!r} (known: {', '.join(PRESETS)})"])
        if overrides is not None and not isinstance(overrides, Mapping):
            raise RulesetError([f"options must be a mapping of names to values, not {overrides!r}"])
        version, preset = PRESETS[name]
        overrides = dict(overrides or {})
        options = {**_BASE, **preset}
        problems = [f"unknown option {key!r}" for key in overrides if key not in OPTION_TYPES]
        for key, value in overrides.items():
            if key in OPTION_TYPES:
                problem = _check_value(key, value)
                if problem:
                    problems.append(problem)
                else:
                    options[key] = value
        if name == "casual" and "teams" not in overrides:
            options["teams"] = options["players"] == 4
        asked = {**options, "players": overrides.get("players", options["players"])}
        problems += _check_combination(asked)
        if problems:
            raise RulesetError(problems)
        return Ruleset(name, version, MappingProxyType(options))

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Ruleset:
        """Rebuild a ruleset from ``to_dict()`` output (as stored in a log)."""
        if not isinstance(data, Mapping):
            raise RulesetError(["a ruleset must be an object with name, version and options"])
        name, version, options = data.get("name"), data.get("version"), data.get("options", {})
        if not isinstance(options, Mapping):
            raise RulesetError(["'options' must be an object"])
        ruleset = Ruleset.from_preset(name, options)  # type: ignore[arg-type]
        if version != ruleset.version:
            raise RulesetError([f"{name} has version {ruleset.version}, not {version!r}"])
        return ruleset

    def __reduce__(self) -> tuple[object, tuple[dict[str, Any]]]:
        return (Ruleset.from_dict, (self.to_dict(),))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "options": dict(self.options)}


def _check_value(key: str, value: Any) -> str | None:
    wanted = OPTION_TYPES[key]
    # bool is a subclass of int; an int option must not silently accept True.
    if not isinstance(value, wanted) or (wanted is int and isinstance(value, bool)):
        return f"{key} must be {wanted.__name__}, not {value!r}"
    if key in _CHOICES and value not in _CHOICES[key]:
        return f"{key} must be one of {', '.join(map(str, _CHOICES[key]))}, not {value!r}"
    if key == "target" and not 1 <= value <= 1000:
        return f"target must be between 1 and 1000, not {value}"
    if key == "max_rounds" and not 1 <= value <= 10000:
        return f"max_rounds must be between 1 and 10000, not {value}"
    return None


def _check_combination(options: Mapping[str, Any]) -> list[str]:
    """Problems between options; ``players`` is the value asked for, even when it is invalid."""
    problems = []
    if options["teams"] and options["players"] != 4:
        problems.append(f"teams needs 4 players, not {options['players']}")
    sevens_bonus = options["all_sevens"] or options["big_wins"]
    if sevens_bonus and options["sevens"] in ("per_suit", "none"):
        problems.append(
            f"the all-sevens bonus needs a sevens category of setenta, most or primera, "
            f"not {options['sevens']}"
        )
    return problems
