"""The URL root: admin (with its Arena health page), the API under /api/, its schema and Swagger
UI, the live event streams under /live/ (web/live_urls.py), the operator's /metrics, the pages."""

from django.contrib import admin
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from tournaments.admin import arena_health
from tournaments.api.metrics import metrics
from web.throttling import AuthThrottle, throttled

admin.site.site_header = "Escoba Arena administration"
admin.site.site_title = "Escoba Arena"
admin.site.index_template = "admin/arena_index.html"

urlpatterns = [
    path("admin/health/", admin.site.admin_view(arena_health), name="arena_health"),
    # The admin's log-in counts in the same password-tries limit as every other door.
    path("admin/login/", throttled(AuthThrottle)(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Our page around Swagger UI: its language and AA colours (web/templates/web/swagger_ui.html).
    path(
        "api/docs/",
        SpectacularSwaggerView.as_view(url_name="schema", template_name="web/swagger_ui.html"),
        name="swagger-ui",
    ),
    path("api/", include("tournaments.api.urls")),
    path("live/", include("web.live_urls")),
    # Prometheus' scrape: no session, so no CSRF check; the view decides who may read it.
    path("metrics", csrf_exempt(metrics), name="metrics"),
    path("", include("web.urls")),
]

handler400 = "tournaments.api.errors.bad_request"
handler404 = "tournaments.api.errors.page_not_found"
handler500 = "tournaments.api.errors.server_error"
