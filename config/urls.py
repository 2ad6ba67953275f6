"""The URL root: admin, the API under /api/, its schema and Swagger UI, the live event streams
under /live/ (web/live.py), the pages."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from web.throttling import AuthThrottle, throttled

admin.site.site_header = "Escoba Arena administration"
admin.site.site_title = "Escoba Arena"

urlpatterns = [
    # The admin's log-in counts in the same password-tries limit as every other door.
    path("admin/login/", throttled(AuthThrottle)(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/", include("tournaments.api.urls")),
    path("live/", include("web.live_urls")),
    path("", include("web.urls")),
]

handler400 = "tournaments.api.errors.bad_request"
handler404 = "tournaments.api.errors.page_not_found"
handler500 = "tournaments.api.errors.server_error"
