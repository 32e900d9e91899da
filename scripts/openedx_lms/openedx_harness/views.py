"""The harness's routes: where the LMS's courseware would start a launch, and what the tests read back."""

from django.contrib.auth import get_user_model, login
from django.http import HttpResponseRedirect, JsonResponse
from lti_consumer.api import get_lti_1p3_launch_start_url
from lti_consumer.data import Lti1p3LaunchData
from lti_consumer.models import LtiAgsLineItem, LtiAgsScore, LtiConfiguration, LtiDlContentItem
from opaque_keys.edx.keys import UsageKey

from openedx_harness import standins

COURSE_TITLE = "Attention, autumn term"


def start(request):
    """Start a launch as the courseware would: ``block`` (a usage key), ``user`` (a username), ``role``
    (an Open edX course role), ``kind``: a plain launch, ``deep`` (deep linking, staff), or ``item`` (the
    deep-linked content item ``item``)."""
    query = request.GET
    config = LtiConfiguration.objects.get(location=UsageKey.from_string(query["block"]))
    person = get_user_model().objects.get(username=query["user"])
    login(request, person, backend="django.contrib.auth.backends.ModelBackend")  # the LMS's session
    launch_data = Lti1p3LaunchData(
        user_id=person.id,
        user_role=query.get("role", "student"),
        config_id=config.config_id,
        resource_link_id=str(config.location),
        external_user_id=standins.external_id(person),
        preferred_username=person.username,
        name=person.profile.name,
        email=person.email,
        context_id=str(config.location.course_key),
        context_type=["course_offering"],
        context_title=COURSE_TITLE,
        context_label=str(config.location.course_key),
    )
    kind = query.get("kind", "launch")
    if kind == "deep":
        url = get_lti_1p3_launch_start_url(launch_data, deep_link_launch=True)
    elif kind == "item":
        url = get_lti_1p3_launch_start_url(launch_data, dl_content_id=int(query["item"]))
    else:
        url = get_lti_1p3_launch_start_url(launch_data)
    return HttpResponseRedirect(url)


def state(request):
    """Everything the tests check: line items, scores, deep-linked content items, published grades."""
    items = [
        {
            "pk": item.pk,
            "block": str(item.lti_configuration.location),
            "resourceId": item.resource_id,
            "resourceLinkId": str(item.resource_link_id or ""),
            "scoreMaximum": item.score_maximum,
            "label": item.label,
            "tag": item.tag,
        }
        for item in LtiAgsLineItem.objects.order_by("pk")
    ]
    scores = [
        {
            "line_item": score.line_item_id,
            "userId": score.user_id,
            "scoreGiven": score.score_given,
            "scoreMaximum": score.score_maximum,
            "timestamp": score.timestamp.isoformat(),
            "gradingProgress": score.grading_progress,
        }
        for score in LtiAgsScore.objects.order_by("pk")
    ]
    content = [
        {"pk": c.pk, "block": str(c.lti_configuration.location), "type": c.content_type, **c.attributes}
        for c in LtiDlContentItem.objects.order_by("pk")
    ]
    return JsonResponse(
        {"line_items": items, "scores": scores, "content_items": content, "grades": standins.published()}
    )
