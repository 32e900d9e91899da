"""The LTI 1.3 tables, as SQLAlchemy ORM classes on :class:`~qkv.store.sql.tables.Base`: the platforms qkv
trusts, the tool's keys, login states and used nonces, line items, contexts, the score outbox and the
registration links. :mod:`qkv.store.sql.tables` re-exports them; like it, these describe the schema after
every migration.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    DateTime,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from qkv.store.sql.tables import Base

__all__ = [
    "LtiContext",
    "LtiLineItem",
    "LtiLoginState",
    "LtiPlatform",
    "LtiRegistrationLink",
    "LtiScoreOutbox",
    "LtiToolKey",
    "LtiUsedNonce",
]


class LtiPlatform(Base):
    """An LMS registered with ``qkv lti add-platform`` (added by the LTI migration)."""

    __tablename__ = "lti_platforms"

    issuer: Mapped[str] = mapped_column(String(255), primary_key=True)
    client_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    deployment_ids: Mapped[str] = mapped_column(Text, nullable=False)  # a JSON list of strings
    auth_url: Mapped[str] = mapped_column(String(1000), nullable=False)
    token_url: Mapped[str] = mapped_column(String(1000), nullable=False)
    jwks_url: Mapped[str] = mapped_column(String(1000), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class LtiToolKey(Base):
    """The tool's RSA key pair, kept here so every server signs with the same key (added with LTI)."""

    __tablename__ = "lti_tool_keys"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    kid: Mapped[str] = mapped_column(String(64), nullable=False)
    private_pem: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class LtiLoginState(Base):
    """An OIDC login in progress: its state (as SHA-256), nonce and platform; used once by the launch."""

    __tablename__ = "lti_login_states"

    state_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    nonce: Mapped[str] = mapped_column(String(128), nullable=False)
    issuer: Mapped[str] = mapped_column(String(255), nullable=False)
    client_id: Mapped[str] = mapped_column(String(255), nullable=False)
    target_link_uri: Mapped[str] = mapped_column(String(2000), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    used_at: Mapped[datetime | None] = mapped_column(DateTime)


class LtiUsedNonce(Base):
    """A nonce of an id token already accepted, kept until the token would have expired anyway."""

    __tablename__ = "lti_used_nonces"

    issuer: Mapped[str] = mapped_column(String(255), primary_key=True)
    nonce: Mapped[str] = mapped_column(String(255), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)


class LtiLineItem(Base):
    """Where a launched learner's score on a lesson goes: the AGS line item of their last launch."""

    __tablename__ = "lti_line_items"

    learner_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    lesson_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    # Added with courses (then part of the key): the course whose line item this is; '' for a launch
    # that named no course. A learner in two courses has a line item per course for the same lesson.
    course_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    issuer: Mapped[str] = mapped_column(String(255), nullable=False)
    client_id: Mapped[str] = mapped_column(String(255), nullable=False)
    subject: Mapped[str] = mapped_column(String(255), nullable=False)  # the LMS's id of the learner
    lineitem_url: Mapped[str] = mapped_column(String(2000), nullable=False)
    last_score: Mapped[int | None] = mapped_column(Integer)
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    # Added for scores an LMS keeps: the last score's timestamp, whole seconds; the next one is later.
    last_score_at: Mapped[datetime | None] = mapped_column(DateTime)
    # Added for a line item that is another lesson's column (an LMS that puts several links on one): why
    # no score goes there; each score is then parked with this sentence for the instructor. NULL: none.
    refusal: Mapped[str | None] = mapped_column(String(2000))


class LtiContext(Base):
    """A class (LMS course) seen in a launch, with its names-and-roles URL when the launch sent one."""

    __tablename__ = "lti_contexts"

    issuer: Mapped[str] = mapped_column(String(255), primary_key=True)
    client_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    context_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    title: Mapped[str] = mapped_column(String(255), nullable=False)
    memberships_url: Mapped[str | None] = mapped_column(String(2000))
    updated_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    roster_pulled_at: Mapped[datetime | None] = mapped_column(DateTime)
    course_id: Mapped[str | None] = mapped_column(String(36))  # added with courses: the class's course


class LtiScoreOutbox(Base):
    """A score waiting for (or already delivered to) an LMS line item; sent in id order per learner and
    line item, retried with back-off while the LMS does not take it."""

    __tablename__ = "lti_score_outbox"
    __table_args__ = (Index("ix_lti_score_outbox_waiting", "sent_at", "learner_id", "lineitem_url"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(String(36), nullable=False)
    lesson_id: Mapped[str] = mapped_column(String(32), nullable=False)
    issuer: Mapped[str] = mapped_column(String(255), nullable=False)
    client_id: Mapped[str] = mapped_column(String(255), nullable=False)
    lineitem_url: Mapped[str] = mapped_column(String(2000), nullable=False)
    score_json: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False)
    next_attempt_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    claimed_until: Mapped[datetime | None] = mapped_column(DateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime)
    course_id: Mapped[str | None] = mapped_column(String(36))  # added with courses: the line item's course
    # Added with the 4xx parking: the LMS refused the score for good (last_error has its sentence).
    parked_at: Mapped[datetime | None] = mapped_column(DateTime)


class LtiRegistrationLink(Base):
    """A one-time LTI Dynamic Registration link made by ``qkv lti registration-link`` (its token hashed)."""

    __tablename__ = "lti_registration_links"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime, nullable=False)
    used_at: Mapped[datetime | None] = mapped_column(DateTime)
    used_by: Mapped[str | None] = mapped_column(String(255))
    failures: Mapped[int] = mapped_column(Integer, nullable=False, server_default=text("0"))
    busy_until: Mapped[datetime | None] = mapped_column(DateTime)
