"""The store the app opens once: one ``Database`` and a repository per aggregate over it."""

from __future__ import annotations

from qkv.store.instructor.class_view import ClassView
from qkv.store.instructor.courses import Courses
from qkv.store.instructor.due_dates import DueDates
from qkv.store.instructor.gradebook import Gradebook
from qkv.store.instructor.instructors import InstructorDesk
from qkv.store.instructor.mistake_groups import MistakeGroups
from qkv.store.learner.accounts import Accounts
from qkv.store.learner.learners import Learners
from qkv.store.learner.personal_data import PersonalData
from qkv.store.runs.grading_jobs import GradingJobs
from qkv.store.sql.database import Database
from qkv.store.sql.engine import PoolLimits
from qkv.store.sql.server_secrets import shared_secret
from qkv.store.work.budget import DEFAULT_CLIENT_BYTES_PER_DAY, check_budget
from qkv.store.work.client_budgets import ClientBudgets
from qkv.store.work.code_work import CodeWork
from qkv.store.work.progress import Progress
from qkv.store.work.regrades import Regrades
from qkv.store.work.retention import DEFAULT_KEEP, check_keep


class Store:
    """The learners' saved work, in SQLite or PostgreSQL: a repository per aggregate over one database.

    Parameters
    ----------
    url : str
        A database URL (see ``create_store_engine``).
    migrate : bool
        Bring the schema up to date on opening (the server does; a read-only export does not).
    must_exist : bool
        Refuse to create a new SQLite file.
    pool : PoolLimits, optional
        The connection pool's size and wait (see ``create_store_engine``).
    keep : int
        Answers and programs kept per learner and exercise: the last ``keep`` of each, plus the first
        correct answer and the best program. Older ones are deleted as new ones arrive; the counts the
        gradebook shows (attempts, submissions, solved, best score, times) are kept as numbers and stay
        exact.
    client_bytes_per_day : int
        Bytes one client may store in a day (UTC) through the writes that name it (``client=``): past
        it only the best and the last program or answer of each learner and exercise are kept and drafts
        may not grow; past a quarter more, nothing more is stored that day (see ``qkv.store.work.budget``).

    Attributes
    ----------
    database : Database
        The engine and its transactions (``read()``, ``write()``).
    learners : Learners
        Whether a learner has saved work; display names.
    progress : Progress
        Variants, answers, and a lesson's saved work read back (``lesson_activity``).
    code : CodeWork
        Programs sent to the grader, and the editor's drafts.
    budgets : ClientBudgets
        Bytes each client stored today.
    gradebook : Gradebook
        One row per learner and exercise.
    instructors : InstructorDesk
        Instructor accounts, sign-in links, sessions, and every learner's work to read.
    accounts : Accounts
        Learner accounts (an external identity for a learner id), their sign-in links and sessions.
    grading_jobs : GradingJobs
        Programs for graders on other machines, and their verdicts (``qkv serve --grading remote``).
    class_view : ClassView
        The class at a glance, read as aggregates (where each learner is, who is stuck).
    courses : Courses
        The server's courses, their learners and staff, and what each instructor may see.
    personal_data : PersonalData
        A learner's data on request: export, erasure, pruning of inactive anonymous learners, the audit.
    mistakes : MistakeGroups
        A class's mistakes grouped by behaviour, the instructors' notes on them, the learners' marks.
    due_dates : DueDates
        Each course's due dates, closes, late credit, time zone, and learners' extensions.
    regrades : Regrades
        Stored programs with the suite version that graded them, regraded verdicts and what they changed.

    Raises
    ------
    ValueError
        If ``keep`` or ``client_bytes_per_day`` is not a whole number of at least 1.
    StoreError
        If the database cannot be reached, or was written by a newer qkv.

    Examples
    --------
    >>> store = Store("sqlite://")
    >>> store.progress.record_answer("a" * 36, "L9.1", "area", "12", correct=True, message="Right.")
    <Keeping.ALL: 'all'>
    >>> store.progress.lesson_activity("a" * 36, "L9.1").exercises["area"].solved
    True
    >>> store.learners.set_display_name("a" * 36, "Ada")
    'Ada'
    >>> [(row.display_name, row.solved) for row in store.gradebook.rows()]
    [('Ada', True)]
    >>> store.close()
    """

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        must_exist: bool = False,
        pool: PoolLimits | None = None,
        keep: int = DEFAULT_KEEP,
        client_bytes_per_day: int = DEFAULT_CLIENT_BYTES_PER_DAY,
    ) -> None:
        check_keep(keep)  # both checked before the database is opened
        check_budget(client_bytes_per_day)
        self.database = Database(url, migrate=migrate, must_exist=must_exist, pool=pool)
        self.budgets = ClientBudgets(self.database, client_bytes_per_day)
        self.learners = Learners(self.database)
        self.progress = Progress(self.database, self.budgets, keep)
        self.code = CodeWork(self.database, self.budgets, keep)
        self.gradebook = Gradebook(self.database)
        self.instructors = InstructorDesk(self.database)
        self.accounts = Accounts(self.database)
        self.grading_jobs = GradingJobs(self.database, self.code)
        self.class_view = ClassView(self.database)
        self.courses = Courses(self.database)
        self.due_dates = DueDates(self.database)
        self.regrades = Regrades(self.database)
        self.personal_data = PersonalData(self.database)
        self.mistakes = MistakeGroups(self.database)

    def shared_secret(self, name: str) -> str:
        """A random secret stored once in the database and shared by every server that uses it.

        The first server to ask creates it; the others read the same value.

        Examples
        --------
        >>> store = Store("sqlite://")
        >>> store.shared_secret("cookie-signing") == store.shared_secret("cookie-signing")
        True
        >>> store.close()
        """
        return shared_secret(self.database, name)

    def ping(self) -> None:
        """Run a trivial query; raises StoreError if the database is unreachable.

        Examples
        --------
        >>> store = Store("sqlite://")
        >>> store.ping()
        >>> store.close()
        """
        self.database.ping()

    def close(self) -> None:
        """Close every pooled connection."""
        self.database.close()


__all__ = ["Store"]
