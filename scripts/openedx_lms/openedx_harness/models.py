"""A user's profile, as edx-platform has one (the consumer's NRPS view prefetches ``user.profile``)."""

from django.conf import settings
from django.db import models


class Profile(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    name = models.CharField(max_length=255, blank=True)
