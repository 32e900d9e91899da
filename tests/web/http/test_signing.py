"""qkv.web.http.signing: one signer for learner and instructor cookies, each purpose apart from the other."""

from __future__ import annotations

import hashlib
import hmac

from itsdangerous import URLSafeSerializer

from qkv.web.http.signing import CookiePolicy, CookieSigner, SameSite

KEY = "a-key-of-the-servers" * 2


def test_cookies_and_tokens_made_before_the_signer_existed_stay_valid() -> None:
    # Pages and cookies of a running class must survive an upgrade: the derivations are the old ones.
    learner_cookie = URLSafeSerializer(KEY, salt="qkv.learner").dumps("ada")
    assert CookieSigner(KEY, "learner").unsign(learner_cookie) == "ada"
    old_learner_csrf = hmac.new(
        hashlib.sha256(b"qkv.csrf\x00" + KEY.encode()).digest(), b"ada", hashlib.sha256
    ).hexdigest()
    assert CookieSigner(KEY, "learner").csrf_token("ada") == old_learner_csrf
    old_instructor_csrf = hmac.new(
        hashlib.sha256(b"qkv.instructor.csrf\x00" + KEY.encode()).digest(), b"s", hashlib.sha256
    ).hexdigest()
    assert CookieSigner(KEY, "instructor").csrf_token("s") == old_instructor_csrf


def test_a_cookie_or_token_of_one_purpose_fails_for_another_and_for_another_key() -> None:
    learner, instructor = CookieSigner(KEY, "learner"), CookieSigner(KEY, "instructor")
    assert instructor.unsign(learner.sign("ada")) is None
    assert learner.unsign(instructor.sign("ada")) is None
    assert not instructor.csrf_matches(learner.csrf_token("ada"), "ada")
    assert CookieSigner("another key" * 4, "learner").unsign(learner.sign("ada")) is None
    assert learner.unsign(URLSafeSerializer(KEY, salt="qkv.learner").dumps(["not", "a string"])) is None
    assert learner.unsign("") is None and learner.unsign(None) is None


def test_the_cookie_policy_writes_the_attributes_it_is_given() -> None:
    policy = CookiePolicy("qkv_x", 3600, SameSite.LAX, secure=True)
    assert policy.set_header("v") == "qkv_x=v; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax; Secure"
    assert policy.clear_header() == "qkv_x=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"
