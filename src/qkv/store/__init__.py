"""Saved progress: learners, every answer and code submission, and per-lesson state.

SQLite (a file in the user data directory by default) or PostgreSQL through SQLAlchemy 2.0, with
a versioned schema upgraded forward on opening. The app opens one ``Store``; its attributes are the
repositories, one per aggregate, over one ``Database``:

    >>> from qkv.store import Store
    >>> store = Store("sqlite://")
    >>> store.learners.set_display_name("0" * 36, "Ada")
    'Ada'
    >>> store.close()

Public names
------------
Store
    The composition the app opens once: ``database``, ``learners``, ``progress``, ``code``,
    ``budgets``, ``gradebook``, ``instructors``, ``accounts``, ``grading_jobs``, ``class_view``, ``courses``,
    ``personal_data``, ``due_dates``, ``regrades``;
    ``shared_secret``, ``ping``, ``close``.
Database
    One engine, opened and migrated; ``read()`` and ``write()`` transactions.
Learners, Progress, CodeWork, ClientBudgets, Gradebook, InstructorDesk, Accounts, GradingJobs, Courses
    The repositories (also reachable as the store's attributes).
DueDates, DueDate, Extension, DatesInForce, Standing, parse_when, zone_named
    A course's dates: due dates, closes, late credit, time zones and extensions.
Regrades, StoredProgram, VerdictChange
    Regrading: stored programs with their suite version, and the verdicts a regrade changed.
CourseRecord, CourseOrigin, MembershipSource, StaffRole, InstructorAccess, LearnerScope, EVERYONE
    Courses: a course, where it came from, how a learner joined it, an instructor's role and access, and
    the learners a view reads.
Admission, Admitted, JobState, JobView, Program, QueueHealth
    The jobs of remote grading: what ``GradingJobs`` returns.
AnswerRecord, CodeRecord, ExerciseActivity, LessonActivity, GradebookRow, Keeping
    What they return.
AccountRecord, MergeReport, RosterEntry
    A learner's account, what signing in merged, a roster's row.
PersonalData, Erasure
    A learner's data on request (export, erasure, retention) and what an erasure removed.
StoreError
    The store's exception: a sentence naming the database.
LearnerErased
    The ``StoreError`` of saving work for a learner erased on request (no row is made under the id again).
RosterError, parse_roster
    A class roster read from CSV, every bad line named.
clean_display_name
    The check a display name passes before it is stored.
DEFAULT_CLIENT_BYTES_PER_DAY
    A client's storage budget unless configured.
PoolLimits, create_store_engine, default_database_url, describe_url
    Engines and URLs.
LATEST_VERSION, schema_version, upgrade
    The schema's versions and its forward migration.
"""

from qkv.store.instructor.courses import (
    EVERYONE,
    CourseOrigin,
    CourseRecord,
    Courses,
    InstructorAccess,
    LearnerScope,
    MembershipSource,
    StaffRole,
)
from qkv.store.instructor.due_dates import (
    DatesInForce,
    DueDate,
    DueDates,
    Extension,
    Standing,
    parse_when,
    zone_named,
)
from qkv.store.instructor.gradebook import Gradebook, GradebookRow
from qkv.store.instructor.instructors import InstructorDesk
from qkv.store.learner.accounts import AccountRecord, Accounts, MergeReport
from qkv.store.learner.learners import Learners, clean_display_name
from qkv.store.learner.personal_data import Erasure, PersonalData
from qkv.store.learner.roster import RosterEntry, RosterError, parse_roster
from qkv.store.runs.grading_jobs import (
    Admission,
    Admitted,
    GradingJobs,
    JobState,
    JobView,
    Program,
    QueueHealth,
)
from qkv.store.sql.database import Database
from qkv.store.sql.engine import PoolLimits, create_store_engine, default_database_url, describe_url
from qkv.store.sql.migrations import LATEST_VERSION, schema_version, upgrade
from qkv.store.store import Store
from qkv.store.store_error import LearnerErased, StoreError
from qkv.store.work.activity import AnswerRecord, CodeRecord, ExerciseActivity, LessonActivity
from qkv.store.work.budget import DEFAULT_CLIENT_BYTES_PER_DAY, Keeping
from qkv.store.work.client_budgets import ClientBudgets
from qkv.store.work.code_work import CodeWork
from qkv.store.work.progress import Progress
from qkv.store.work.regrades import Regrades, StoredProgram, VerdictChange

__all__ = [
    "DEFAULT_CLIENT_BYTES_PER_DAY",
    "EVERYONE",
    "LATEST_VERSION",
    "AccountRecord",
    "Accounts",
    "Admission",
    "Admitted",
    "AnswerRecord",
    "ClientBudgets",
    "CodeRecord",
    "CodeWork",
    "CourseOrigin",
    "CourseRecord",
    "Courses",
    "Database",
    "DatesInForce",
    "DueDate",
    "DueDates",
    "Erasure",
    "ExerciseActivity",
    "Extension",
    "Gradebook",
    "GradebookRow",
    "GradingJobs",
    "InstructorAccess",
    "InstructorDesk",
    "JobState",
    "JobView",
    "Keeping",
    "LearnerErased",
    "LearnerScope",
    "Learners",
    "LessonActivity",
    "MembershipSource",
    "MergeReport",
    "PersonalData",
    "PoolLimits",
    "Program",
    "Progress",
    "QueueHealth",
    "Regrades",
    "RosterEntry",
    "RosterError",
    "StaffRole",
    "Standing",
    "Store",
    "StoreError",
    "StoredProgram",
    "VerdictChange",
    "clean_display_name",
    "create_store_engine",
    "default_database_url",
    "describe_url",
    "parse_roster",
    "parse_when",
    "schema_version",
    "upgrade",
    "zone_named",
]
