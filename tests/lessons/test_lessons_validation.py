"""Broken lesson files are reported as ``file:line: message``; a second lesson needs no engine change."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from qkv.cli.lessons import lessons
from qkv.lessons import BUILTIN_CONTENT, LessonError, LessonPart, load_catalog, validate
from qkv.lessons.widgets import WIDGETS_FOLDER

LESSON_DIR = "L4/L4.1-queries-keys-values"


def _only_the_edited_lesson(folder: str, names: list[str]) -> list[str]:
    """What the copy leaves out: caches, and every lesson folder of a chapter but the one the tests edit
    (the others are then planned lessons of the chapter, which validates as well): validating a copy costs
    one lesson's checks, not the chapter's."""
    skipped = [name for name in names if name == "__pycache__"]
    if (Path(folder) / "chapter.toml").is_file():
        edited = Path(LESSON_DIR).name
        skipped += [
            name for name in names if (Path(folder) / name / "lesson.md").is_file() and name != edited
        ]
    return skipped


@pytest.fixture
def content(tmp_path: Path) -> Path:
    """A copy of the built-in content to break, holding the chapter's own files and the lesson edited."""
    shutil.copytree(BUILTIN_CONTENT, tmp_path / "content", ignore=_only_the_edited_lesson)
    return tmp_path / "content"


def widgets_of(content: Path) -> list[str]:
    """The widgets the copy holds: the chapter's and the edited lesson's own (not the lessons left out)."""
    owners = [content / "L4", content / LESSON_DIR]
    return sorted(folder.name for owner in owners for folder in owner.glob(f"{WIDGETS_FOLDER}/*/"))


def edit(file: Path, old: str, new: str) -> int:
    """Replace the first ``old`` by ``new``; return the 1-based line where the change starts."""
    text = file.read_text(encoding="utf-8")
    assert old in text, old
    file.write_text(text.replace(old, new, 1), encoding="utf-8")
    return text[: text.index(old)].count("\n") + 1


def problems_of(path: Path) -> list[str]:
    return [str(problem) for problem in validate(path)]


def test_the_shipped_content_validates(content: Path) -> None:
    assert validate() == []
    assert validate(content) == []
    assert validate(content / "L4") == []
    assert validate(content / LESSON_DIR) == []
    assert validate(content / LESSON_DIR / "lesson.md") == []


def test_invalid_toml_in_chapter_toml(content: Path) -> None:
    chapter = content / "L4" / "chapter.toml"
    line = edit(chapter, 'title = "Attention"', 'title = "Attention')
    assert problems_of(content) == [f"{chapter}:{line}: Invalid TOML: Illegal character '\\n'."]


def test_an_exercise_with_broken_toml(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    line = edit(lesson, 'label = "k ="', 'label = "k =')
    (problem,) = problems_of(content)
    assert problem == f"{lesson}:{line}: The TOML in this block is invalid: Illegal character '\\n'."


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'kind = "letter"',
            'kind = "essay"',
            "kind must be one of numeric, letter, choice, code, not 'essay'.",
        ),
        (
            'answer = "k"',
            'answer = "kk"',
            "answer must name a value of the lesson's variant, not 'kk'; its numbers are {numbers}.",
        ),
        (
            'part = "quiz"',
            'part = "exam"',
            "part must be one of the lesson's parts (predict-first, part1, one-query, part2, quiz), not 'exam'.",
        ),
        (
            'name = "v"',
            'nam = "v"',
            "A numeric exercise has no setting 'nam' (allowed: answer, atol, correct_message, "
            "hint, kind, label, mistakes, name, part, prompt, rtol).",
        ),
        (
            "k_by_columns = ",
            "k_by_rows = ",
            "The mistake 'k_by_rows' names no numeric value of the variant or of wrong_answers().",
        ),
        (
            'prompt = "The key is x @ Wk',
            'prompt = "The key is {{y}} @ Wk',
            "The placeholder {{y}} names nothing in the lesson's variant.",
        ),
        ('answer = "V"', 'answer = "W"', "answer must be one of Q, K, V, not 'W'."),
        ('answer = "A"', 'answer = "E"', "answer must be one of A, B, C, not 'E'."),
    ],
)
def test_exercise_problems_point_at_the_key(content: Path, old: str, new: str, message: str) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    line = edit(lesson, old, new)
    if "{numbers}" in message:  # the names it would take: every number of the variant
        data = load_catalog().lesson("L4.1").hooks
        names = data.namespace(data.variant(None))
        numbers = sorted(name for name, value in names.items() if _is_number_or_numbers(value))
        message = message.replace("{numbers}", ", ".join(numbers))
    assert f"{lesson}:{line}: {message}" in problems_of(content)


def _is_number_or_numbers(value: object) -> bool:
    """What a numeric answer may name: a number, or a flat list of them."""
    if isinstance(value, list):
        return bool(value) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    return isinstance(value, int | float) and not isinstance(value, bool)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "```{widget} projection-sliders",
            "```{widget} projection-slider",
            "There is no widget called 'projection-slider' (known: {widgets}).",
        ),
        (
            "```{exercise} k\n",
            "```{quiz} k\n",
            "Unknown directive '{quiz}'; the directives are {exercise} and {widget}.",
        ),
        ("```{exercise} v\n", "```{exercise} k\n", "The exercise id 'k' is used twice in this lesson."),
        (
            "::::section quiz\n## Check",
            "::::section quiz\n### Check",
            "The section 'quiz' must start with its title as a '## ' heading.",
        ),
        ("::::section part2", "::::section part1", "The section id 'part1' is already used on this page."),
        (
            "::::section part2",
            "::::section Part_2",
            "A section needs an id of lowercase letters, digits and dashes, not 'Part_2'.",
        ),
        (
            "::::section idea\n",
            "Loose text.\n\n::::section idea\n",
            "This text is outside any section; put it between '::::section ID' and '::::'.",
        ),
        ("For x = {{x}}", "For x = {{xx}}", "The placeholder {{xx}} names nothing in the lesson's variant."),
        (
            'id = "L4.1"',
            'id = "L5.1"',
            "The lesson id 'L5.1' does not belong to chapter L4: a lesson of this folder has an id that "
            "starts with 'L4.'.",
        ),
        ('title = "Queries, keys and values"\n', "", "'title' must be a non-empty text, not None."),
        ("slider_min = -5", "slider_min = 5.5", "slider_min must be a whole number, not 5.5."),
    ],
)
def test_lesson_file_problems(content: Path, old: str, new: str, message: str) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    line = edit(lesson, old, new)
    message = message.replace("{chapter}", str(content / "L4" / "chapter.toml"))
    message = message.replace("{listed}", ", ".join(load_catalog().chapter("L4").lesson_ids))
    message = message.replace("{widgets}", ", ".join(widgets_of(content)))
    found = problems_of(content)
    assert any(p.endswith(message) and p.startswith(f"{lesson}:") for p in found), found
    if "widget" in old or "slider" in old:  # widget problems point at the widget's opening fence
        line = edit(lesson, "```{widget}", "```{widget}")
    if "title" not in message:  # a missing key has no line of its own
        assert f"{lesson}:{line}: {message}" in found


def test_bad_math_in_the_reference(content: Path) -> None:
    reference = content / "L4" / "reference.md"
    line = edit(reference, "$$\nS=QK^T", "$$\nS=\\left(QK^T")
    (problem,) = problems_of(content)
    assert problem.startswith(f"{reference}:{line}: The formula 'S=\\left(QK^T/")
    assert "could not be converted to MathML" in problem


def test_a_syntax_error_in_lesson_py(content: Path) -> None:
    hooks = content / LESSON_DIR / "lesson.py"
    line = edit(hooks, "def wrong_answers(", "def wrong_answers(:")
    assert problems_of(content) == [f"{hooks}:{line}: Syntax error: invalid syntax."]


def test_a_failing_variant_function(content: Path) -> None:
    hooks = content / LESSON_DIR / "lesson.py"
    line = edit(hooks, "        numbers, one = SEED_PAGE", "        1 / 0\n        numbers, one = SEED_PAGE")
    (problem,) = problems_of(content)  # at lesson.py's own line, the path said once
    assert problem == f"{hooks}:{line}: variant(None) failed with ZeroDivisionError: division by zero"


def test_loading_draws_only_the_printed_page_and_validating_draws_the_samples(content: Path) -> None:
    # A variant that fails for drawn numbers: loading (what a server does at start) does not draw it, so
    # it loads; the full check does, and names it.
    hooks = content / LESSON_DIR / "lesson.py"
    edit(
        hooks,
        "    if seed is None:\n",
        "    if seed == 2:\n        raise RuntimeError('seed two')\n    if seed is None:\n",
    )
    assert load_catalog(content).lesson("L4.1").variant(None)["x"]
    (problem,) = problems_of(content)
    assert "variant(2) failed with RuntimeError: seed two" in problem


def test_the_built_in_catalog_is_loaded_once_per_process() -> None:
    assert load_catalog() is load_catalog()


def test_a_starter_without_one_of_the_suites_functions(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    edit(lesson, "def param_count(d_model", "def param_counts(d_model")
    line = next(
        n for n, text in enumerate(lesson.read_text().splitlines(), 1) if text.startswith("starter_code")
    )
    assert problems_of(content) == [
        f"{lesson}:{line}: The starter code has no 'def param_count(' for the function 'param_count'."
    ]


def _line_of(lesson: Path, start: str) -> int:
    return next(n for n, text in enumerate(lesson.read_text().splitlines(), 1) if text.startswith(start))


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("hints = []", "hints must be a list of 1 to 10 sentences, not []."),
        ('hints = "Think."', "hints must be a list of 1 to 10 sentences, not 'Think.'."),
        ('hints = ["Think.", " "]', "Hint 2 must be a non-empty string, not ' '."),
        ('hints = ["Think.", 3]', "Hint 2 must be a non-empty string, not 3."),
    ],
)
def test_code_hints_must_be_a_list_of_sentences(content: Path, new: str, message: str) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    text = lesson.read_text()
    start = text.index("hints = [")
    end = text.index("]\n", start) + 1
    lesson.write_text(text[:start] + new + text[end:])
    assert problems_of(content) == [f"{lesson}:{_line_of(lesson, 'hints = ')}: {message}"]


def _with_hint(content: Path, hint: str) -> Path:
    lesson = content / LESSON_DIR / "lesson.md"
    text = lesson.read_text()
    at = text.index("hints = [\n") + len("hints = [\n")
    lesson.write_text(text[:at] + f"    {hint},\n" + text[at:])
    return lesson


def test_a_hint_that_copies_a_line_of_the_solution_is_refused(content: Path) -> None:
    # Spaces, quotes and backticks do not hide it.
    lesson = _with_hint(content, "'It is `return  X@Wq, X @ Wk, X @ Wv`, then shapes.'")
    assert problems_of(content) == [
        f"{lesson}:{_line_of(lesson, 'hints = ')}: Hint 1 holds the reference solution's code "
        "'return X @ Wq, X @ Wk, X @ Wv'; say it in words, or mark the hint {text = ..., "
        "shows_solution = true} so that reading it counts as being shown the solution."
    ]


def test_a_hint_marked_as_showing_the_solution_may_hold_its_code(content: Path) -> None:
    _with_hint(content, "{ text = 'It is `return X @ Wq, X @ Wk, X @ Wv`.', shows_solution = true }")
    assert problems_of(content) == []
    exercise = load_catalog(content).lessons[0].exercises["functions"]
    assert exercise.hints[0] == "It is `return X @ Wq, X @ Wk, X @ Wv`." and exercise.solution_hints == (1,)


def test_a_hint_table_holds_only_its_text_and_mark(content: Path) -> None:
    lesson = _with_hint(content, "{ text = 'Think.', counts = true }")
    assert problems_of(content) == [
        f"{lesson}:{_line_of(lesson, 'hints = ')}: Hint 1 must be a string or a table of text and "
        "shows_solution (true or false), not {'text': 'Think.', 'counts': True}."
    ]


def test_a_solution_without_one_of_the_suites_functions(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    text = lesson.read_text()
    at = text.index("solution = ")
    lesson.write_text(text[:at] + text[at:].replace("def output_shape(", "def output_shapes(", 1))
    assert problems_of(content) == [
        f"{lesson}:{_line_of(lesson, 'solution = ')}: The solution has no 'def output_shape(' for the function "
        "'output_shape'."
    ]


def test_hints_and_solution_are_optional(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    text = lesson.read_text()
    start, end = text.index("hints = ["), text.index("\n```", text.index("solution = "))
    lesson.write_text(text[:start] + text[end + 1 :])
    assert problems_of(content) == []
    exercise = next(ex for ex in load_catalog(content).lessons[0].exercises.values() if ex.kind == "code")
    assert (exercise.hints, exercise.solution) == ((), None)


def test_a_code_exercise_without_a_suite_in_the_grading_module(content: Path) -> None:
    grading = content / LESSON_DIR / "grading.py"
    edit(grading, 'SUITES = {"functions": functions}', 'SUITES = {"code": functions}')
    lesson = content / LESSON_DIR / "lesson.md"
    line = next(
        n for n, text in enumerate(lesson.read_text().splitlines(), 1) if "{exercise} functions" in text
    )
    assert problems_of(content) == [
        f"{lesson}:{line}: The code exercise 'functions' has no tests: the lesson's grading.py must define "
        "SUITES['functions'].",
    ]


def test_a_suite_for_no_code_exercise(content: Path) -> None:
    grading = content / LESSON_DIR / "grading.py"
    edit(
        grading, 'SUITES = {"functions": functions}', 'SUITES = {"functions": functions, "extra": functions}'
    )
    assert problems_of(content) == [
        f"{grading}:1: SUITES['extra'] belongs to no code exercise of lesson.md (its code exercises: functions)."
    ]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("def _square(", "def _square(:", "Syntax error: invalid syntax."),
        ('SUITES = {"functions": functions}', "SUITES = [functions]", None),
        ('SUITES = {"functions": functions}', 'SUITES = {"functions": "functions"}', None),
        ('SUITES = {"functions": functions}', "SUITES = {1 / 0: functions}", None),
    ],
)
def test_a_broken_grading_module(content: Path, old: str, new: str, message: str | None) -> None:
    grading = content / LESSON_DIR / "grading.py"
    line = edit(grading, old, new)
    expected = {
        "SUITES = [functions]": f"{grading}:1: A grading module defines SUITES, a dict of exercise ids to Suites, "
        "not a list.",
        'SUITES = {"functions": "functions"}': f"{grading}:1: SUITES['functions'] must be a qkv.grading.Suite "
        "keyed by an exercise id, not the str 'functions'.",
        "SUITES = {1 / 0: functions}": f"{grading}:{line}: Importing this file failed with ZeroDivisionError: "
        "division by zero",
    }.get(new, f"{grading}:{line}: {message}")
    assert expected in problems_of(content)


def test_a_when_predicate_that_cannot_take_the_tests_arguments_is_refused_at_load(content: Path) -> None:
    grading = content / LESSON_DIR / "grading.py"
    line = edit(grading, "def _not_three(got: Any, *args: Any)", "def _not_three(got: Any, X: Any)")
    with pytest.raises(LessonError) as caught:
        load_catalog(content)
    (problem,) = caught.value.problems
    assert str(problem).startswith(
        f"{grading}:{line}: In the lesson folder {Path(LESSON_DIR).name}, the when= of Returned("
    )
    assert problem.message.endswith(
        "is _not_three(got, X), which cannot take what the grader passes it: the value returned, "
        "then the test's arguments (got, X, Wq, Wk, Wv)."
    )


def test_load_catalog_lists_every_problem(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    first = edit(lesson, 'kind = "letter"', 'kind = "essay"')
    second = edit(lesson, "For x = {{x}}", "For x = {{xx}}")
    with pytest.raises(LessonError) as caught:
        load_catalog(content)
    assert [str(p) for p in caught.value.problems] == [
        f"{lesson}:{second}: The placeholder {{{{xx}}}} names nothing in the lesson's variant.",
        f"{lesson}:{first}: kind must be one of numeric, letter, choice, code, not 'essay'.",
    ]
    assert str(caught.value).startswith(f"The lessons under {content} have 2 problems:\n{lesson}:")


def test_missing_paths_and_folders_without_chapters(tmp_path: Path) -> None:
    assert problems_of(tmp_path / "nope") == [f"{tmp_path / 'nope'}:1: This path does not exist."]
    assert problems_of(tmp_path) == [
        f"{tmp_path}:1: No chapter.toml was found here or in the folders right below it."
    ]


def test_a_second_lesson_needs_no_engine_change(content: Path) -> None:
    for written in (content / "L4").glob("L4.[2-9]-*"):
        shutil.rmtree(written)  # this test writes its own L4.2 next to L4.1 alone
    folder = content / "L4" / "L4.2-scores"
    folder.mkdir()
    (folder / "lesson.md").write_text(
        '---\nid = "L4.2"\ntitle = "Scaled dot-product scores"\ngoal = "Score a query against keys."\n'
        '[[parts]]\nid = "quiz"\ntitle = "Check"\ncounts_toward_done = false\n---\n\n'
        "::::section idea\n## The idea\n\nScores are $q\\cdot k/\\sqrt{d_k}$.\n::::\n\n"
        "::::section quiz\n## Check\n\n"
        '```{exercise} scale\nkind = "choice"\npart = "quiz"\nanswer = "B"\nprompt = "What divides the score?"\n'
        '[[choices]]\nletter = "A"\ntext = "d_k"\nfeedback = "Not d_k itself."\n'
        '[[choices]]\nletter = "B"\ntext = "sqrt(d_k)"\nfeedback = "Yes."\n```\n::::\n',
        encoding="utf-8",
    )
    catalog = load_catalog(content)
    second = catalog.lesson("L4.2")
    assert [lesson.id for lesson in catalog.lessons] == ["L4.1", "L4.2"]
    assert second.place == f"L4.2 · lesson 2 of {len(catalog.chapter('L4').lesson_ids)}"
    assert second.check("scale", "b").correct
    assert [s.id for s in second.render()] == ["idea", "quiz", "reference"]
    assert second.render()[-1] is catalog.lesson("L4.1").render()[-1]
    assert second.variant(4) == {"seed": 4}
    assert second.parts == (LessonPart("quiz", "Check", counts_toward_done=False),)
    assert second.variant_section_ids() == []


def test_planned_and_unknown_lessons_are_errors_with_sentences() -> None:
    catalog = load_catalog()
    written = [lesson.id for lesson in catalog.lessons]
    assert written[0] == "L4.1"
    planned_id = next(
        (lesson_id for lesson_id in catalog.chapter("L4").lesson_ids if lesson_id not in written), None
    )
    if planned_id is not None:
        with pytest.raises(LessonError) as planned:
            catalog.lesson(planned_id)
        assert str(planned.value) == (
            f"The lesson '{planned_id}' is planned but not written yet; the written lessons are: "
            f"{', '.join(written)}."
        )
    with pytest.raises(LessonError) as unknown:
        catalog.lesson("L9.1")
    assert (
        str(unknown.value)
        == f"There is no written lesson 'L9.1'; the written lessons are: {', '.join(written)}."
    )
    with pytest.raises(LessonError, match=r"^There is no chapter 'L9'; the chapters are: L4\.$"):
        catalog.chapter("L9")


Invoke = Callable[..., object]


def test_cli_list_and_validate(content: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(lessons, ["list"])
    assert listed.exit_code == 0
    lines = listed.output.splitlines()
    assert lines[:14] == [
        "L4  Attention",
        "  L4.1  Queries, keys and values  (12 exercises)",
        "      L4.1/predict (choice)",
        "      L4.1/q (numeric)",
        "      L4.1/k (numeric)",
        "      L4.1/v (numeric)",
        "      L4.1/averaged (letter)",
        "      L4.1/scores (numeric)",
        "      L4.1/weights (numeric)",
        "      L4.1/output (numeric)",
        "      L4.1/functions (code: project_qkv, qkv_shapes, output_shape, param_count)",
        "      L4.1/quiz (choice)",
        "      L4.1/doubled (choice)",
        "      L4.1/shifted (choice)",
    ]
    # Every later lesson of the chapter is listed in order: with its exercises once written, else as planned.
    catalog = load_catalog()
    expected = lines[:14]
    for lesson_id in catalog.chapter("L4").lesson_ids[1:]:
        title = next(entry.title for entry in catalog.chapter("L4").planned if entry.id == lesson_id)
        if lesson_id in [lesson.id for lesson in catalog.lessons]:
            exercises = catalog.lesson(lesson_id).exercises
            expected.append(f"  {lesson_id}  {title}  ({len(exercises)} exercises)")
            expected += [f"      {lesson_id}/{ex.id} ({ex.kind}" for ex in exercises.values()]
        else:
            expected.append(f"  {lesson_id}  {title}  (planned)")
    assert [line.split(":")[0] if "(code" in line else line.rstrip(")") for line in lines] == [
        line.split(":")[0] if "(code" in line else line.rstrip(")") for line in expected
    ]
    # Every later lesson of the chapter follows in order: planned, or written with its exercises.
    later = [line for line in listed.output.splitlines()[14:] if line.startswith("  L4.")]
    assert [line.split()[0] for line in later] == load_catalog().chapter("L4").lesson_ids[1:]
    written = {lesson.id for lesson in load_catalog().lessons}
    assert all(line.endswith("(planned)") == (line.split()[0] not in written) for line in later)
    ok = runner.invoke(lessons, ["validate"])
    assert (ok.exit_code, ok.output) == (0, "The built-in lessons: no problems found.\n")
    lesson = content / LESSON_DIR / "lesson.md"
    line = edit(lesson, 'kind = "letter"', 'kind = "essay"')
    broken = runner.invoke(lessons, ["validate", str(content)])
    assert broken.exit_code == 1
    assert (
        broken.stdout == f"{lesson}:{line}: kind must be one of numeric, letter, choice, code, not 'essay'.\n"
    )
    assert broken.stderr == "1 problem found.\n"
    listed_broken = runner.invoke(lessons, ["list", "--path", str(content)])
    assert listed_broken.exit_code == 1 and f"{lesson}:{line}:" in listed_broken.stderr


PART1 = '[[parts]]\nid = "part1"\ntitle = "Part 1: by hand"\nchanges_with_variant = true\n'


@pytest.mark.parametrize(
    ("old", "new", "offset", "message"),
    [
        (
            PART1,
            PART1 + "colour = 'red'\n",
            4,
            "A [[parts]] table has no setting 'colour' (allowed: id, title, changes_with_variant, "
            "counts_toward_done).",
        ),
        (
            PART1,
            PART1.replace('id = "part1"\n', ""),
            0,
            "Every [[parts]] table needs an id: the id of a section of the page.",
        ),
        (
            PART1,
            PART1.replace('title = "Part 1: by hand"\n', ""),
            0,
            "The part 'part1' needs a title, which the progress panel shows.",
        ),
        (
            PART1,
            PART1.replace('title = "Part 1: by hand"', "title = 1"),
            2,
            "A part's title must be a non-empty text, not 1.",
        ),
        (
            PART1,
            PART1.replace("changes_with_variant = true", 'changes_with_variant = "yes"'),
            3,
            "changes_with_variant must be true or false, not 'yes'.",
        ),
        (
            PART1,
            PART1 + "counts_toward_done = 1\n",
            4,
            "counts_toward_done must be true or false, not 1.",
        ),
        (
            '[[parts]]\nid = "part2"',
            '[[parts]]\nid = "part1"',
            1,
            "The part id 'part1' is declared twice.",
        ),
        (
            PART1,
            PART1.replace('id = "part1"', "id = 7"),
            1,
            "A part id must be a section id (lowercase letters, digits and dashes), not 7.",
        ),
        (
            '[[parts]]\nid = "quiz"',
            '[[parts]]\nid = "exam"',
            1,
            "The part 'exam' is not a section of the page; its sections are predict-first, idea, part1, one-query, "
            "part2, quiz.",
        ),
    ],
)
def test_part_problems_point_at_the_front_matter(
    content: Path, old: str, new: str, offset: int, message: str
) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    line = edit(lesson, old, new) + offset
    found = problems_of(content)
    assert f"{lesson}:{line}: {message}" in found, found


def test_every_exercise_names_a_declared_part(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    edit(lesson, '[[parts]]\nid = "quiz"', '[[parts]]\nid = "idea"')
    line = edit(lesson, 'part = "quiz"', 'part = "quiz"')
    found = problems_of(content)
    parts = "predict-first, part1, one-query, part2, idea"
    assert found[0] == f"{lesson}:{line}: part must be one of the lesson's parts ({parts}), not 'quiz'."
    # Each of the quiz's three questions is reported, and nothing else.
    assert len(found) == 3 and all(p.endswith(f"parts ({parts}), not 'quiz'.") for p in found)


def test_parts_that_are_not_tables(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    text = lesson.read_text(encoding="utf-8")
    start, end = text.index("[[parts]]"), text.index("---\n", 4)
    lesson.write_text(text[:start] + "parts = 3\n" + text[end:], encoding="utf-8")
    line = text[:start].count("\n") + 1
    found = problems_of(content)
    assert f"{lesson}:{line}: parts must be [[parts]] tables, each with an id and a title, not 3." in found


def test_a_lesson_without_parts_has_no_exercises(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    text = lesson.read_text(encoding="utf-8")
    start, end = text.index("[[parts]]"), text.index("---\n", 4)
    lesson.write_text(text[:start] + text[end:], encoding="utf-8")
    found = problems_of(content)
    assert len(found) == len(load_catalog().lesson("L4.1").exercises), found
    line = edit(lesson, 'part = "quiz"', 'part = "quiz"')
    assert (
        f"{lesson}:{line}: The exercise is in part 'quiz', but the lesson declares no parts; add a "
        "[[parts]] table to the front matter for each section that holds exercises."
    ) in found


def test_lessons_chapter_toml_does_not_list_join_its_outline_at_the_end_in_id_order(content: Path) -> None:
    for new_id in ("L4.10", "L4.9"):
        folder = content / "L4" / f"{new_id}-copy"
        shutil.copytree(content / LESSON_DIR, folder)
        edit(folder / "lesson.md", 'id = "L4.1"', f'id = "{new_id}"')
        edit(folder / "lesson.md", 'title = "Queries, keys and values"', f'title = "Copy {new_id}"')
    catalog = load_catalog(content)
    assert catalog.chapter("L4").lesson_ids[-2:] == ["L4.9", "L4.10"]
    assert [lesson.id for lesson in catalog.lessons][-2:] == ["L4.9", "L4.10"]
    count = len(catalog.chapter("L4").lesson_ids)
    assert catalog.lesson("L4.10").place == f"L4.10 · lesson {count} of {count}"


def test_a_lesson_file_that_is_not_utf8_is_a_problem_with_its_place(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    lesson.write_bytes(lesson.read_bytes().replace(b"Queries, keys and values", b"Queries \xff keys", 1))
    (problem,) = problems_of(content)
    assert problem.startswith(f"{lesson}:1: This file cannot be read: 'utf-8' codec can't decode byte 0xff")


def test_a_bad_inline_formula_is_reported_at_its_own_line(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    line = (
        edit(
            lesson, "## The idea\n", "## The idea\n\nA first line, and then\nthe formula $y=\\left(x$ here.\n"
        )
        + 3
    )
    assert problems_of(content) == [
        f"{lesson}:{line}: The formula 'y=\\left(x' could not be converted to MathML (ExtraLeftOrMissingRightError)."
    ]


def test_a_misspelt_placeholder_in_a_prompt_is_reported_once(content: Path) -> None:
    lesson = content / LESSON_DIR / "lesson.md"
    line = edit(lesson, "Type k.", "Type {{kk}}.")
    assert problems_of(content) == [
        f"{lesson}:{line}: The placeholder {{{{kk}}}} names nothing in the lesson's variant."
    ]


def test_every_predicate_is_read_against_what_the_grader_passes_it() -> None:
    from qkv.grading import Suite, TestCase, Whole
    from qkv.grading.feedback.hints import Mutated, Raised, Returned
    from qkv.lessons.suites import check_predicates

    def area(w: int, h: int) -> int:
        return w * h

    def either(*args: object) -> bool:
        return True

    def got_only(got: object) -> bool:
        return True

    def sides(w: int, h: int) -> bool:
        return True

    hints = [
        Returned("Fits.", when=either, requires=sides),
        Raised("Fits too.", "ValueError", when=sides),
        Returned("Too few.", when=got_only),
        Raised("Takes the value.", "ValueError", when=lambda got, w, h: True),
        Mutated("Needs one side.", requires=lambda w: True),
    ]
    suite = Suite(["area"], [TestCase("area", "area", (2, 3), area, Whole(), hints)])
    found = {
        problem.message.split(" is ")[0]: problem.message
        for problem in check_predicates(Path("T9.1-areas/grading.py"), {"area": suite})
    }
    prefix = "In the lesson folder T9.1-areas, the"
    assert sorted(found) == [
        f"{prefix} requires= of Mutated('Needs one side.')",
        f"{prefix} when= of Raised('Takes the value.')",
        f"{prefix} when= of Returned('Too few.')",
    ]
    assert found[f"{prefix} when= of Returned('Too few.')"].endswith(
        "is got_only(got), which cannot take what the grader passes it: the value returned, then the test's "
        "arguments (got, w, h)."
    )
    assert found[f"{prefix} when= of Raised('Takes the value.')"].endswith(
        "is the lambda (got, w, h), which cannot take what the grader passes it: the test's arguments (w, h)."
    )
