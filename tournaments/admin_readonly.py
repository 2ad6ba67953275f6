"""What the admin shows and never edits: results, ratings and checks are written only by the
services (one transaction each), so their pages and inlines are read-only."""

from django.contrib import admin
from django.http import HttpRequest


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """Rows listed under their parent: every field shown read-only, none added or deleted."""

    extra = 0
    max_num = 0
    can_delete = False

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> list[str]:
        return list(self.fields or [])
