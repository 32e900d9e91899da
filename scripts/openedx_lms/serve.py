"""Open edX's LTI 1.3 consumer (lti-consumer-xblock, its real Django views and migrations) on loopback,
for qkv's tests. Run by .venv-openedx's Python, never qkv's:

    .venv-openedx/bin/python scripts/openedx_lms/serve.py --tool http://127.0.0.1:PORT --data DIR

It migrates a fresh SQLite database in DIR, makes one course with its people and two LTI 1.3 blocks
pointing at the tool (``programmatic``: line items made by the tool, deep linking and NRPS on;
``declarative``: the block's own line item, read-only), serves on a free port, and then prints one JSON
line, its readiness: the LMS's URL and each block's registration (client id, deployment id, URLs).
"""

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from types import SimpleNamespace
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

HERE = Path(__file__).resolve().parent
COURSE = "course-v1:qkv+ATT+2026"
BLOCKS = {
    "programmatic": "block-v1:qkv+ATT+2026+type@lti_consumer+block@programmatic",
    "declarative": "block-v1:qkv+ATT+2026+type@lti_consumer+block@declarative",
}
PEOPLE = [  # username, name, Open edX course role
    ("ada", "Ada Lovelace", "student"),
    ("emmy", "Emmy Noether", "student"),
    ("grace", "Grace Hopper", "staff"),
    ("alan", "Alan Turing", "Community TA"),
]


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def _setup(tool: str, root: str) -> dict[str, object]:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from lti_consumer.models import CourseAllowPIISharingInLTIFlag, LtiConfiguration
    from opaque_keys.edx.keys import CourseKey, UsageKey

    from openedx_harness import standins
    from openedx_harness.models import Profile

    settings.LMS_ROOT_URL = root
    call_command("migrate", run_syncdb=True, verbosity=0)
    CourseAllowPIISharingInLTIFlag.objects.create(course_id=CourseKey.from_string(COURSE), enabled=True)
    for username, name, role in PEOPLE:
        user = get_user_model().objects.create(username=username, email=f"{username}@school.example")
        Profile.objects.create(user=user, name=name)
        standins.COURSE_ROLES[username] = role
    blocks = {}
    for mode, location in BLOCKS.items():
        standins.BLOCKS[location] = SimpleNamespace(display_name=f"qkv lessons ({mode})", weight=10)
        config = LtiConfiguration.objects.create(
            location=UsageKey.from_string(location),
            version=LtiConfiguration.LTI_1P3,
            config_store=LtiConfiguration.CONFIG_ON_DB,
            lti_1p3_oidc_url=f"{tool}/lti/login",
            lti_1p3_launch_url=f"{tool}/lti/launch" if mode == "programmatic" else f"{tool}/lessons/L4.1",
            lti_1p3_redirect_uris=[f"{tool}/lti/launch"],
            lti_advantage_enable_nrps=True,
            lti_advantage_deep_linking_enabled=True,
            lti_advantage_deep_linking_launch_url=f"{tool}/lti/launch",
            lti_advantage_ags_mode=mode,
        )
        passport = config.lti_1p3_passport
        passport.lti_1p3_tool_keyset_url = f"{tool}/lti/jwks.json"
        passport.save()
        consumer = config.get_lti_consumer()
        blocks[mode] = {
            "location": location,
            "client_id": consumer.client_id,
            "deployment_id": consumer.deployment_id,
            "issuer": consumer.iss,
            "auth_url": f"{root}/api/lti_consumer/v1/launch/",
            "token_url": f"{root}/api/lti_consumer/v1/token/{passport.passport_id}",
            "jwks_url": f"{root}/api/lti_consumer/v1/public_keysets/{passport.passport_id}",
        }
    return {"url": root, "course": COURSE, "blocks": blocks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True, help="qkv's URL")
    parser.add_argument("--data", required=True, help="a folder for the LMS's database")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    os.environ["DJANGO_SETTINGS_MODULE"] = "settings"
    os.environ["OPENEDX_LMS_DB"] = str(Path(args.data) / "openedx.sqlite3")
    import django

    django.setup()
    from openedx_harness import standins

    standins.install()
    from django.core.wsgi import get_wsgi_application

    # The port is the server's own (bound before anything is made): no other process can take it between.
    server = make_server("127.0.0.1", 0, get_wsgi_application(), server_class=_Server, handler_class=_Quiet)
    ready = _setup(args.tool.rstrip("/"), f"http://127.0.0.1:{server.server_port}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(json.dumps(ready), flush=True)
    sys.stdin.read()  # serve until the test closes our stdin (or ends)
    server.shutdown()


if __name__ == "__main__":
    main()
