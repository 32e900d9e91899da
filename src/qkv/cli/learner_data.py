"""``qkv learners export`` and ``qkv learners erase``: a learner's data on request (GDPR art. 15 and 17).

``export ID`` writes everything stored about the learner as JSON; ``erase ID`` removes it all in one
transaction. ID is the learner's id (as the instructor's pages show it) or an account's external id
(``--issuer`` for an LMS's learners). Both leave a line in the store's privacy audit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from qkv.cli.options import database_url_option, opened_store

if TYPE_CHECKING:
    from qkv.store import Store

_ISSUER = click.option(
    "--issuer",
    default=None,
    help="For an LMS's learner given by external id: the platform's issuer (default: this server's roster).",
)


def _learner_id(store: Store, given: str, issuer: str | None) -> str:
    """The learner id that ``given`` names: a learner id, or an account's external id."""
    if store.learners.has_saved_work(given):
        return given
    found = store.accounts.find(issuer, given)
    if found is None:
        where = f" at {issuer!r}" if issuer else ""
        raise click.ClickException(
            f"No learner has the id or external id {given!r}{where}; 'qkv learners list' shows the accounts, "
            "and the instructor's learner page shows every learner's id."
        )
    return found.learner_id


def _write_private(path: Path, text: str) -> None:
    """Write the export readable by its owner only: it holds everything about a person."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text + "\n")
    except OSError as error:
        raise click.ClickException(f"Cannot write the export to {path}: {error.strerror}.") from None


@click.command("export")
@click.argument("learner")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the JSON (readable by you only); default: standard output.",
)
@_ISSUER
@database_url_option
def export_learner(learner: str, out: Path | None, issuer: str | None, database_url: str | None) -> None:
    """Write everything stored about LEARNER (id or external id) as JSON.

    The account, progress and variants, every answer and program kept, drafts, the kept totals, sign-in
    links and sessions (as hashes), LTI line items, scores sent or waiting, and grading jobs.
    """
    from qkv.store.learner.personal_data import dumps

    with opened_store(database_url) as store:
        learner_id = _learner_id(store, learner, issuer)
        document = store.personal_data.export(learner_id)
    if document is None:  # erased between the look-up and the export
        raise click.ClickException(f"The learner {learner_id!r} has no data any more.")
    text = dumps(document)
    if out is None:
        click.echo(text)
        return
    _write_private(out, text)
    rows = sum(len(found) for found in document["tables"].values())
    click.echo(f"Wrote {rows} rows about the learner {learner_id} to {out} (readable by you only).")


@click.command("erase")
@click.argument("learner")
@click.option("--yes", is_flag=True, help="Erase without asking first.")
@_ISSUER
@database_url_option
def erase_learner(learner: str, yes: bool, issuer: str | None, database_url: str | None) -> None:
    """Remove everything stored about LEARNER (id or external id), sessions, outbox and drafts included.

    The class's numbers are counted again without the learner; a line in the privacy audit records the
    erasure by the learner's random id only. This cannot be undone: export first if the data is wanted.
    """
    with opened_store(database_url) as store:
        learner_id = _learner_id(store, learner, issuer)
        if not yes:
            click.confirm(
                f"Erase everything stored about the learner {learner_id}? This cannot be undone", abort=True
            )
        erasure = store.personal_data.erase(learner_id)
    if not erasure.found:
        raise click.ClickException(f"The learner {learner_id!r} has no data any more.")
    click.echo(f"Erased the learner {learner_id}: {erasure.sentence()}. The privacy audit notes it.")
