"""Typed readers for environment variables.

Every machine-specific setting comes from the environment (twelve-factor). Settings modules read
variables only through these helpers, which keeps the list of names they understand easy to find
(the compose test relies on that: it collects the first argument of every call).
"""

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
_REQUIRED = object()


def env(name: str, default: str | object = _REQUIRED) -> str:
    """Return the variable as text; without a default a missing or empty value stops start-up."""
    value = os.environ.get(name)
    if value:
        return value
    if default is _REQUIRED:
        raise ImproperlyConfigured(f"Set the environment variable {name}.")
    return str(default)


def env_bool(name: str, default: bool) -> bool:
    """Read a yes/no flag; an unrecognised spelling is an error rather than a silent False."""
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a yes/no flag (1/0, true/false), not {value!r}.")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}.") from None


def env_list(name: str, default: list[str]) -> list[str]:
    """Read a comma-separated list, ignoring blanks around and between items."""
    value = os.environ.get(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_ints(name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    """Read as many comma-separated integers as ``default`` has (``10000,100,10``)."""
    value = os.environ.get(name)
    if not value:
        return default
    try:
        numbers = tuple(int(item) for item in value.split(","))
    except ValueError:
        numbers = ()
    if len(numbers) != len(default) or min(numbers) < 0:
        raise ImproperlyConfigured(
            f"{name} must be {len(default)} whole numbers of at least 0 separated by commas, "
            f"not {value!r}."
        )
    return numbers
