"""Reading a class roster: every bad line named, nothing accepted from a roster with one."""

from __future__ import annotations

import pytest

from qkv.store.learner.roster import MAX_ROSTER_ROWS, RosterError, parse_roster


def test_columns_are_found_by_name_in_any_order_and_spelling() -> None:
    roster = parse_roster("Email,External-ID,Notes,NAME\r\nada@x.org, s-1 ,front row,  Ada   Lovelace \r\n")
    assert [(e.line, e.name, e.external_id, e.email) for e in roster] == [
        (2, "Ada Lovelace", "s-1", "ada@x.org")
    ]


def test_a_header_without_the_columns_is_refused() -> None:
    with pytest.raises(
        RosterError, match=r"Line 1 must name the columns 'name' and 'external id'.*'external id' is missing"
    ):
        parse_roster("name,student\nAda,1\n")
    with pytest.raises(RosterError, match="The roster is empty"):
        parse_roster("")
    with pytest.raises(RosterError, match="names no learners"):
        parse_roster("name,external id\n\n")


def test_every_bad_row_is_named_by_its_line() -> None:
    text = "\n".join(
        [
            "name,external id",
            "Ada,s-1",
            ",s-2",  # 3: no name
            "Grace,",  # 4: no id
            "N" * 81 + ",s-5",  # 5: name too long
            "Katherine,s-1",  # 6: duplicate
            "Bell\x07,s-7",  # 7: a control character
            "Mary,s-8,extra",  # fine: extra cells are ignored
        ]
    )
    with pytest.raises(RosterError) as refused:
        parse_roster(text)
    message = str(refused.value)
    assert message.startswith("The roster has 5 bad rows, so nothing was imported: line 3: the name is empty")
    for expected in (
        "line 4: 'Grace' has no external id",
        "line 5: the name 'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNN'... has 81 characters, more than 80",
        "line 6: the external id 's-1' is on line 2 already",
        "line 7: the name 'Bell\\x07' contains control characters",
    ):
        assert expected in message


def test_a_long_list_of_problems_is_cut_with_a_count() -> None:
    text = "name,external id\n" + "".join(f",id-{i}\n" for i in range(30))
    with pytest.raises(RosterError, match=r"30 bad rows.*; and 10 more\.$"):
        parse_roster(text)


def test_a_nul_byte_and_a_huge_roster_are_refused() -> None:
    with pytest.raises(RosterError, match="NUL byte"):
        parse_roster("name,external id\nA\x00,1\n")
    rows = "".join(f"L{i},{i}\n" for i in range(MAX_ROSTER_ROWS + 1))
    with pytest.raises(RosterError, match=f"at most {MAX_ROSTER_ROWS}"):
        parse_roster("name,external id\n" + rows)
