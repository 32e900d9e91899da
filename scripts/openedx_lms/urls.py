"""The consumer's real views under /api/, as edx-platform mounts them, and the harness's own routes."""

from django.urls import include, path

import openedx_harness.views as harness

urlpatterns = [
    path("api/", include(("lti_consumer.plugin.urls", "lti_consumer"), namespace="lti_consumer")),
    path("harness/start", harness.start),
    path("harness/state", harness.state),
]
