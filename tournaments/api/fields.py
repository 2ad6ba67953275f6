"""Input fields whose refusals are in our words."""

from typing import Any

from rest_framework import serializers


class StringField(serializers.CharField):
    """A JSON string, nothing else, refused with `message` otherwise.

    DRF's `CharField` turns `12` into `"12"`, so a number sent as a bot's URL would be refused
    later by the address check, with a message about URL schemes that puzzles its sender.
    """

    def __init__(self, *, message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error_messages["invalid"] = message

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
