"""The hidden tests of L4.1's code exercise, with expected values from the ``qkv`` reference.

Every sentence of the Part 2 spec is covered: values on random shapes (one token, d_v ≠ d_k, non-square
weights), each ValueError condition, the tuple and the dict keys, param_count on several sizes, and the
lesson's own x = [1, 2] example. Each hint names a mistake learners make; the grader shows it when the
failed result is what that mistake computes for the same inputs.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import numpy as np
from chapter import BY_COLUMNS, Array, random_fractions, random_sizes, type_error_hint

from qkv import output_shape, param_count, project_qkv, qkv_shapes
from qkv.grading import (
    Close,
    Items,
    Keys,
    Mistake,
    Raised,
    Raises,
    Returned,
    Shape,
    Suite,
    TestCase,
    Whole,
    by_keyword,
    called_again,
    check_raises,
    in_dtype,
    missing_function_hint,
)

FUNCTIONS = ("project_qkv", "qkv_shapes", "output_shape", "param_count")

# ---------------------------------------------------------------------------------------------- hints
MISSING_FUNCTION = missing_function_hint(FUNCTIONS)
ORDER = "Your Q, K and V are right but come back in another order: return them as (Q, K, V)."
NOT_A_TUPLE = "Return the three matrices together as the tuple (Q, K, V)."
ELEMENTWISE = (
    "It looks like * multiplied the matrices element by element; a projection is a matrix product, "
    "written X @ W."
)
FIRST_ROW = "Only the first row of X was projected: X @ W projects every token (every row of X) at once."
TRUNCATION = (
    "Your numbers look cut to whole numbers: keep the values as floats (no int(), astype(int) or dtype=int)."
)
MISSING_COLUMN_CHECK = (
    "Raise ValueError when Wq and Wk have different numbers of columns: every query is compared with every "
    "key, so both need the same d_k."
)
MISSING_ROW_CHECK = "Raise ValueError when a weight matrix does not have d_model rows (one per column of X)."
TYPE_ERROR = type_error_hint("a matrix of the wrong size is a bad value")
WRONG_AXIS_CHECK = (
    "Your code refused valid inputs whose d_model differs from d_k: a shape check looks at the wrong axis. "
    "Compare each weight matrix's rows, W.shape[0], with the columns of X, X.shape[1]."
)
# Where d_v differs from d_k, a check on the wrong axis refuses the inputs too: this sentence names both
# causes, and the test above (d_model ≠ d_k, d_v = d_k) names the wrong axis alone.
TOO_STRICT = (
    "Your code refused valid inputs where d_v differs from d_k. Only Wq and Wk must have the same number "
    "of columns, so accept a Wv of another width; and each weight's rows, W.shape[0], are what must match "
    "X.shape[1]."
)
K_WITH_DV = "K has d_k columns, like Q, because each query is compared with each key; only V has d_v columns."
Q_TRANSPOSED = "Q has one row per token: its shape is (n, d_k), not (d_k, n)."
V_TRANSPOSED = "V has one row per token: its shape is (n, d_v), not (d_v, n)."
LOWERCASE_KEYS = 'Use the keys "Q", "K" and "V" exactly as written: dictionary keys are case-sensitive.'
SHAPE_NOT_TUPLE = "Give each shape as a tuple such as (2, 3), the way NumPy's .shape does, not as a list."
OUTPUT_WITH_NK = (
    "The output has one row per query, so its shape uses n_q, not n_k: the keys are averaged away."
)
OUTPUT_SCORES = (
    "(n_q, n_k) is the shape of the score matrix; the output has one row per query and d_v columns."
)
BIASES = "Count the weights only: these projections have no biases."
THREE_DK = (
    "Wv has d_v columns, which may differ from d_k, so the count is d_model·(2·d_k + d_v), not 3·d_model·d_k."
)
MISSING_MATRIX = "Count all three matrices: Wq and Wk have d_model·d_k weights each, and Wv has d_model·d_v."

# ------------------------------------------------------------------------------------- comparators
QKV = ("Q", "K", "V")
PROJECTIONS = Items([Close(), Close(), Close()], names=QKV, description="(Q, K, V), three matrices")
QKV_TUPLE = Items(
    [Close(), Close(), Close()],
    names=QKV,
    description="the tuple (Q, K, V)",
    exact_type=True,
    container_only=True,
)
SHAPES = Keys(Shape())

# ---------------------------------------------------------------------------- mistakes, as computations


def _by_item(name: str, weight: int) -> list[Mistake]:
    """What each known slip computes instead of X @ W, for one of Q (weight 1), K (2) and V (3)."""
    slips = [
        (BY_COLUMNS, lambda X, W: X @ W.T),
        (ELEMENTWISE, lambda X, W: X * W),
        (FIRST_ROW, lambda X, W: X[:1] @ W),
        (FIRST_ROW, lambda X, W: X[0] @ W),
        (TRUNCATION, lambda X, W: np.trunc(X) @ np.trunc(W)),
        (TRUNCATION, lambda X, W: np.trunc(X @ W)),
        (TRUNCATION, lambda X, W: np.round(X @ W)),
    ]
    return [
        Mistake(message, lambda *args, slip=slip: slip(args[0], args[weight]), at=name)
        for message, slip in slips
    ]


def _reordered(order: tuple[int, ...]) -> Mistake:
    return Mistake(ORDER, lambda *args: tuple(project_qkv(*args)[i] for i in order))


def _not_three(got: Any, *args: Any) -> bool:
    return not isinstance(got, tuple | list) or len(got) != 3


PROJECTION_HINTS = [
    Returned(NOT_A_TUPLE, when=_not_three),
    *[_reordered(order) for order in permutations(range(3)) if order != (0, 1, 2)],
    Mistake(K_WITH_DV, lambda X, Wq, Wk, Wv: X @ Wv, at="K"),
    *_by_item("Q", 1),
    *_by_item("K", 2),
    *_by_item("V", 3),
    Raised(ELEMENTWISE, "ValueError", contains="broadcast"),
    Raised(BY_COLUMNS, "ValueError", contains="matmul"),
]
SHAPES_HINTS = [
    Returned(LOWERCASE_KEYS, when=lambda got, *args: isinstance(got, dict) and set(got) == {"q", "k", "v"}),
    Mistake(K_WITH_DV, lambda n, d_model, d_k, d_v: (n, d_v), at="K"),
    Mistake(Q_TRANSPOSED, lambda n, d_model, d_k, d_v: (d_k, n), at="Q"),
    Mistake(Q_TRANSPOSED, lambda n, d_model, d_k, d_v: (d_k, n), at="K"),
    Mistake(V_TRANSPOSED, lambda n, d_model, d_k, d_v: (d_v, n), at="V"),
]
OUTPUT_HINTS = [
    Mistake(OUTPUT_WITH_NK, lambda n_q, n_k, d_v: (n_k, d_v)),
    Mistake(OUTPUT_SCORES, lambda n_q, n_k, d_v: (n_q, n_k)),
]
PARAM_HINTS = [
    Mistake(BIASES, lambda d_model, d_k, d_v: d_model * (2 * d_k + d_v) + 2 * d_k + d_v),
    Mistake(BIASES, lambda d_model, d_k, d_v: d_model * (2 * d_k + d_v) + 3),
    Mistake(BIASES, lambda d_model, d_k, d_v: (d_model + 1) * (2 * d_k + d_v)),
    Mistake(THREE_DK, lambda d_model, d_k, d_v: 3 * d_model * d_k),
    Mistake(THREE_DK, lambda d_model, d_k, d_v: 3 * d_model * d_v),
    Mistake(MISSING_MATRIX, lambda d_model, d_k, d_v: d_model * (d_k + d_v)),
    Mistake(MISSING_MATRIX, lambda d_model, d_k, d_v: 2 * d_model * d_k),
]

# ------------------------------------------------------------------------------------ input generators
MAX_SIZE = 9  # the largest size the shape and count tests draw


def _square(rng: np.random.Generator) -> tuple[Array, ...]:
    n, m = (int(v) for v in rng.integers(2, 5, size=2))
    return (
        random_fractions(rng, n + 1, m),
        random_fractions(rng, m, m),
        random_fractions(rng, m, m),
        random_fractions(rng, m, m),
    )


def _one_token(rng: np.random.Generator) -> tuple[Array, ...]:
    d_model, d_k = random_sizes(rng, 2, 2, 5)
    d_v = d_k + 1
    return (
        random_fractions(rng, 1, d_model),
        random_fractions(rng, d_model, d_k),
        random_fractions(rng, d_model, d_k),
        random_fractions(rng, d_model, d_v),
    )


def _dv_smaller(rng: np.random.Generator) -> tuple[Array, ...]:
    """d_v below d_k (the statement allows any d_v), d_model different from both."""
    n, d_k = int(rng.integers(2, 6)), int(rng.integers(4, 7))
    d_model, d_v = d_k + 1, int(rng.integers(1, d_k - 1))
    return (
        random_fractions(rng, n, d_model),
        random_fractions(rng, d_model, d_k),
        random_fractions(rng, d_model, d_k),
        random_fractions(rng, d_model, d_v),
    )


def _dv_differs(rng: np.random.Generator) -> tuple[Array, ...]:
    n, d_k = int(rng.integers(2, 6)), int(rng.integers(2, 5))
    d_v = d_k + int(rng.integers(1, 3))
    return (
        random_fractions(rng, n, d_k),
        random_fractions(rng, d_k, d_k),
        random_fractions(rng, d_k, d_k),
        random_fractions(rng, d_k, d_v),
    )


def _non_square(rng: np.random.Generator) -> tuple[Array, ...]:
    n, d_model, d_k = random_sizes(rng, 3, 2, 6)
    return (
        random_fractions(rng, n, d_model),
        random_fractions(rng, d_model, d_k),
        random_fractions(rng, d_model, d_k),
        random_fractions(rng, d_model, d_k),
    )


def _small_square(rng: np.random.Generator) -> tuple[Array, ...]:
    n, m = int(rng.integers(2, 5)), int(rng.integers(2, 4))
    return (
        random_fractions(rng, n, m),
        random_fractions(rng, m, m),
        random_fractions(rng, m, m),
        random_fractions(rng, m, m),
    )


def _bad_rows(position: int) -> Any:
    """Inputs where the weight at ``position`` (1: Wq, 2: Wk, 3: Wv) has one row too many."""

    def draw(rng: np.random.Generator) -> tuple[Array, ...]:
        n, d_model, d_k = random_sizes(rng, 3, 2, 5)
        args = [random_fractions(rng, n, d_model), *(random_fractions(rng, d_model, d_k) for _ in range(3))]
        args[position] = random_fractions(rng, d_model + 1, d_k)
        return tuple(args)

    return draw


def _columns_differ(rng: np.random.Generator) -> tuple[Array, ...]:
    n, d_model, d_k = random_sizes(rng, 3, 2, 5)
    good = random_fractions(rng, d_model, d_k)
    return random_fractions(rng, n, d_model), good, random_fractions(rng, d_model, d_k + 1), good


def _fewer_key_columns(rng: np.random.Generator) -> tuple[Array, ...]:
    """The same rule from the other side (Wk narrower than Wq): a rule is tested twice, so that code which
    raises on one numbered call instead of checking the shapes cannot pass both."""
    n, d_model, d_k = random_sizes(rng, 3, 3, 6)
    return (
        random_fractions(rng, n, d_model),
        random_fractions(rng, d_model, d_k),
        random_fractions(rng, d_model, d_k - 1),
        random_fractions(rng, d_model, d_k),
    )


THE_LESSON = (
    np.array([[1, 2]]),
    np.array([[1, 0], [1, 1]]),
    np.array([[0, 1], [1, 0]]),
    np.array([[2, 0], [0, 2]]),
)
ROWS = "a weight matrix does not have d_model rows"
# A ValueError that fails a test expecting one is NumPy's own (X @ W on the wrong sizes): no check ran.
ROW_HINTS = [
    Returned(MISSING_ROW_CHECK),
    Raised(MISSING_ROW_CHECK, "ValueError"),
    Raised(TYPE_ERROR, "TypeError"),
]


def _rejects(reason: str) -> Any:
    return check_raises(project_qkv, Raises("ValueError", reason))


def _projection(name: str, args: Any, **extra: Any) -> TestCase:
    hints = extra.pop("hints", PROJECTION_HINTS)
    return TestCase(name, "project_qkv", args, project_qkv, extra.pop("compare", PROJECTIONS), hints)


def _shapes(name: str, args: Any, compare: Any = SHAPES) -> TestCase:
    return TestCase(name, "qkv_shapes", args, qkv_shapes, compare, SHAPES_HINTS)


def _shape_not_tuple(got: Any, *args: Any) -> bool:
    """The right keys, but a shape given as something other than a tuple (a list, most often)."""
    return (
        isinstance(got, dict) and set(got) == set(QKV) and not all(isinstance(v, tuple) for v in got.values())
    )


def _four_sizes(rng: np.random.Generator) -> list[int]:
    return random_sizes(rng, 4, high=MAX_SIZE)


def _telling(draw: Any) -> Any:
    """Redraw ``draw``'s param_count sizes until every named mistake gives a count of its own.

    With d_v = 2·d_k, for instance, 3·d_model·d_k equals d_model·(d_k + d_v): the hint would then
    depend on the random sizes. Mistakes that give the right count (3·d_model·d_k when d_v = d_k) say
    nothing there and are left out.
    """

    def sizes(rng: np.random.Generator) -> tuple[int, ...]:
        while True:
            args = tuple(draw(rng))
            right = param_count(*args)
            counts: dict[str, set[int]] = {}
            for hint in PARAM_HINTS:
                counts.setdefault(hint.message, set()).add(hint.compute(*args))
            wrong = [values - {right} for values in counts.values()]
            if sum(len(values) for values in wrong) == len(set().union(*wrong)):
                return args

    return sizes


# --------------------------------------------------------------------------------------------- the suite
# Correct solutions run in tens of milliseconds: an endless loop holds a grader for 4 s, not 10.
functions = Suite(
    FUNCTIONS,
    [
        _projection("project_qkv reproduces the lesson's example x = [1, 2]", THE_LESSON),
        _projection("project_qkv with square weights (d_model = d_k = d_v)", _square),
        _projection(
            "project_qkv with non-square weights (d_model ≠ d_k)",
            _non_square,
            hints=[*PROJECTION_HINTS, Raised(WRONG_AXIS_CHECK, "ValueError")],
        ),
        _projection(
            "project_qkv with d_v different from d_k",
            _dv_differs,
            hints=[*PROJECTION_HINTS, Raised(TOO_STRICT, "ValueError")],
        ),
        *called_again(
            _projection(
                "project_qkv with d_v different from d_k",
                _dv_differs,
                hints=[*PROJECTION_HINTS, Raised(TOO_STRICT, "ValueError")],
            )
        ),
        _projection(
            "project_qkv with d_v smaller than d_k",
            _dv_smaller,
            hints=[*PROJECTION_HINTS, Raised(TOO_STRICT, "ValueError")],
        ),
        _projection(
            "project_qkv with one token (n = 1)",
            _one_token,
            hints=[*PROJECTION_HINTS, Raised(TOO_STRICT, "ValueError")],
        ),
        # Any numeric matrices: float32 and integer inputs, and the weights passed by their names.
        in_dtype(_projection("project_qkv with d_v different from d_k", _dv_differs), "float32"),
        in_dtype(
            _projection("project_qkv with d_v different from d_k", _dv_differs),
            "int64",
            name="project_qkv with integer matrices",
        ),
        by_keyword(_projection("project_qkv with d_v different from d_k", _dv_differs), "Wq", "Wk", "Wv"),
        _projection(
            "project_qkv returns the tuple (Q, K, V)",
            _small_square,
            compare=QKV_TUPLE,
            hints=[Returned(NOT_A_TUPLE)],
        ),
        *[
            TestCase(
                f"project_qkv raises ValueError when {matrix} does not have d_model rows",
                "project_qkv",
                _bad_rows(position),
                _rejects(ROWS),
                hints=ROW_HINTS,
            )
            for position, matrix in ((1, "Wq"), (2, "Wk"), (3, "Wv"))
        ],
        TestCase(
            "project_qkv raises ValueError when Wq and Wk have different numbers of columns",
            "project_qkv",
            _columns_differ,
            _rejects("Wq and Wk have different numbers of columns"),
            hints=[Returned(MISSING_COLUMN_CHECK), Raised(TYPE_ERROR, "TypeError")],
        ),
        TestCase(
            "project_qkv raises ValueError when Wk has fewer columns than Wq",
            "project_qkv",
            _fewer_key_columns,
            _rejects("Wq and Wk have different numbers of columns"),
            hints=[Returned(MISSING_COLUMN_CHECK), Raised(TYPE_ERROR, "TypeError")],
        ),
        _shapes("qkv_shapes for the lesson's sizes (n = 1, d_model = d_k = d_v = 2)", (1, 2, 2, 2)),
        _shapes("qkv_shapes with n, d_model, d_k and d_v all different", _four_sizes),
        _shapes("qkv_shapes with one token (n = 1)", lambda rng: (1, *random_sizes(rng, 3, high=MAX_SIZE))),
        by_keyword(
            _shapes("qkv_shapes with n, d_model, d_k and d_v all different", _four_sizes), "d_k", "d_v"
        ),
        _shapes('qkv_shapes uses the keys "Q", "K" and "V"', _four_sizes, Keys(Shape(), keys_only=True)),
        TestCase(
            "qkv_shapes gives each shape as a tuple",
            "qkv_shapes",
            _four_sizes,
            qkv_shapes,
            Keys(Shape(tuple_only=True)),
            [*SHAPES_HINTS, Returned(SHAPE_NOT_TUPLE, when=_shape_not_tuple)],
        ),
        TestCase(
            "output_shape with n_q, n_k and d_v all different",
            "output_shape",
            lambda rng: random_sizes(rng, 3, high=MAX_SIZE),
            output_shape,
            Shape(),
            OUTPUT_HINTS,
        ),
        TestCase(
            "output_shape with one query (n_q = 1)",
            "output_shape",
            lambda rng: (1, *random_sizes(rng, 2, high=MAX_SIZE)),
            output_shape,
            Shape(),
            OUTPUT_HINTS,
        ),
        by_keyword(
            TestCase(
                "output_shape with n_q, n_k and d_v all different",
                "output_shape",
                lambda rng: random_sizes(rng, 3, high=MAX_SIZE),
                output_shape,
                Shape(),
                OUTPUT_HINTS,
            ),
            "n_k",
            "d_v",
        ),
        TestCase(
            "output_shape returns a tuple",
            "output_shape",
            lambda rng: random_sizes(rng, 3, high=MAX_SIZE),
            output_shape,
            Shape(tuple_only=True),
            [Returned(SHAPE_NOT_TUPLE)],
        ),
        TestCase(
            "param_count for the lesson's sizes (2, 2, 2)",
            "param_count",
            (2, 2, 2),
            param_count,
            Whole(),
            PARAM_HINTS,
        ),
        TestCase(
            "param_count with d_model, d_k and d_v all different",
            "param_count",
            _telling(lambda rng: random_sizes(rng, 3, 2, 40)),
            param_count,
            Whole(),
            PARAM_HINTS,
        ),
        by_keyword(
            TestCase(
                "param_count with d_model, d_k and d_v all different",
                "param_count",
                _telling(lambda rng: random_sizes(rng, 3, 2, 40)),
                param_count,
                Whole(),
                PARAM_HINTS,
            ),
            "d_k",
            "d_v",
        ),
        TestCase(
            "param_count with d_v = d_k but d_model different",
            "param_count",
            _telling(lambda rng: (lambda d_model, d_k: (d_model, d_k, d_k))(*random_sizes(rng, 2, 2, 40))),
            param_count,
            Whole(),
            PARAM_HINTS,
        ),
        TestCase(
            "param_count for a typical head (512, 64, 64)",
            "param_count",
            (512, 64, 64),
            param_count,
            Whole(),
            PARAM_HINTS,
        ),
    ],
    time_limit_s=4.0,
)

SUITES = {"functions": functions}
