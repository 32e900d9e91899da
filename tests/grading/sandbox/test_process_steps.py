"""The sandbox's pure steps, without a process: reading the report, its limits, decoding the exit."""

from __future__ import annotations

import signal

import pytest

from qkv.grading.sandbox.report_reader import (
    MAX_REPORT_BYTES,
    MAX_REPORT_LINES,
    MAX_REPORT_READS,
    ReportReader,
    decode_exit,
    parse_report,
    report_overflow,
)

START, DONE = b'{"event": "start"}', b'{"event": "done"}'


# -- reading the report ----------------------------------------------------------------------------


def test_lines_split_across_reads_are_put_back_together() -> None:
    report = ReportReader()
    for piece in (b'{"ev', b'ent": "st', b'art"}\n{"event": "test", "n', b'": 1}\n'):
        report.feed(piece)
    assert report.lines == [START, b'{"event": "test", "n": 1}']
    assert report.events() == ([{"event": "start"}, {"event": "test", "n": 1}], None)
    assert report.done is False


def test_bytes_left_over_from_the_ready_line_start_the_report() -> None:
    report = ReportReader(leftover=b'{"event": "st')
    report.feed(b'art"}\n' + DONE + b"\n")
    assert report.done is True
    assert report.events() == ([{"event": "start"}, {"event": "done"}], None)


def test_done_is_seen_only_as_a_whole_line_of_its_own() -> None:
    report = ReportReader()
    report.feed(b'{"event": "start", "note": "{\\"event\\": \\"done\\"}"}\n')
    assert report.done is False
    report.feed(b"  " + DONE + b"  \n")
    assert report.done is True


def test_an_unfinished_last_line_is_still_decoded() -> None:
    report = ReportReader()
    report.feed(START + b"\n" + DONE)
    assert report.done is False  # no newline yet: the harness may still be writing it
    assert report.events() == ([{"event": "start"}, {"event": "done"}], None)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"not json", "a line of the report was not valid JSON"),
        (b"[1, 2, 3]", "a line of the report was not a JSON object"),
        (b"[" * 100_000, "a line of the report was not valid JSON"),  # nesting deep enough to recurse
    ],
)
def test_a_line_that_is_not_a_json_object_makes_the_report_untrusted(line: bytes, reason: str) -> None:
    events, malformed = parse_report([START, line, DONE])
    assert (events, malformed) == ([{"event": "start"}], reason)


def test_blank_lines_are_skipped() -> None:
    assert parse_report([b"", START, b"   "], b"\n") == ([{"event": "start"}], None)


# -- the report's limits ---------------------------------------------------------------------------


def test_a_report_over_the_byte_limit_is_refused_and_reading_stops() -> None:
    report = ReportReader()
    report.feed(START + b"\n")
    report.feed(b"x" * MAX_REPORT_BYTES)
    assert report.malformed == "the report was larger than the grader accepts"
    assert report.events() == ([], "the report was larger than the grader accepts")


def test_a_report_trickled_in_more_reads_than_the_harness_makes_is_refused() -> None:
    report = ReportReader()
    for _ in range(MAX_REPORT_READS):
        report.feed(b" ")
    assert report.malformed is None
    report.feed(b" ")
    assert report.malformed == "the report came in more pieces than the harness ever writes"


def test_a_report_with_too_many_lines_is_refused_even_with_done_among_them() -> None:
    report = ReportReader()
    report.feed(b"{}\n" * MAX_REPORT_LINES + DONE + b"\n")
    assert report.malformed == "the report had more lines than the grader accepts"
    assert report.done is False
    assert report.events() == ([], "the report had more lines than the grader accepts")


def test_the_byte_limit_is_named_before_the_others() -> None:
    everything = report_overflow(MAX_REPORT_BYTES + 1, MAX_REPORT_READS + 1, MAX_REPORT_LINES + 1)
    assert everything == "the report was larger than the grader accepts"
    assert report_overflow(MAX_REPORT_BYTES, MAX_REPORT_READS, MAX_REPORT_LINES) is None


# -- how the harness ended ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("returncode", "use_bwrap", "decoded"),
    [
        (0, True, (0, None)),
        (1, False, (1, None)),
        (-signal.SIGKILL, False, (None, signal.SIGKILL)),
        (-signal.SIGXCPU, True, (None, signal.SIGXCPU)),
        (128 + signal.SIGSEGV, True, (None, signal.SIGSEGV)),  # bubblewrap: 128 + the child's signal
        (128 + signal.SIGSEGV, False, (128 + signal.SIGSEGV, None)),  # a plain exit status without it
        (128, True, (128, None)),
        (None, True, (None, None)),
    ],
)
def test_the_exit_is_decoded_into_a_status_or_a_signal(
    returncode: int | None, use_bwrap: bool, decoded: tuple[int | None, int | None]
) -> None:
    assert decode_exit(returncode, use_bwrap=use_bwrap) == decoded
