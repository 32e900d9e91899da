"""Django settings for Open edX's LTI consumer served on loopback for qkv's tests (see serve.py)."""

import os

SECRET_KEY = "openedx-lti-harness-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "rest_framework",
    "django_filters",
    "config_models",
    "lti_consumer",
    "openedx_harness",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "urls"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("OPENEDX_LMS_DB", ":memory:"),
        "OPTIONS": {"timeout": 30},
    }
}
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
# Set by serve.py once its port is known: the issuer and every URL the consumer makes.
LMS_ROOT_URL = "http://127.0.0.1"
PLATFORM_NAME = "Open edX (qkv's tests)"
# Open edX's own pattern of block usage ids in its URLs.
USAGE_ID_PATTERN = r"(?P<usage_id>(?:i4x://?[^/]+/[^/]+/[^/]+/[^@]+(?:@[^/]+)?)|(?:[^/]+))"
LTI_NRPS_DISALLOW_PII = False
LOGGING = {  # errors (a 500's traceback) to stderr, which the tests keep in openedx.log
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {"django": {"handlers": ["stderr"], "level": "WARNING", "propagate": False}},
}
