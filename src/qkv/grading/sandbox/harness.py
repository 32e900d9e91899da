"""The program that runs a submission inside the sandbox and reports what its functions returned.

This file is bound into the sandbox and run there as a plain script
(``python -I -S -u harness.py FD LIMITS SITE_DIR``), so it imports nothing from ``qkv``: only the
standard library and NumPy are there. It never judges anything. It imports the learner's code, calls the
requested functions on the inputs it is sent, and writes the raw outcomes (values, or the exception's type
and message) as JSON lines to a private file descriptor that the trusted parent reads. The verdict is
computed by the parent, which also treats anything malformed here as an error, so a submission that
tampers with this process can at worst make itself fail.

Protocol (one JSON object per line on the report descriptor):

- ``{"event": "ready", "marks": {...}}`` once NumPy is imported and the limits are in place (``marks``: the
  monotonic clock and this process's CPU time when the interpreter reached this file and now);
- then the job is read from stdin:
  ``{"source": str, "calls": [{"id": int, "function": str, "args": [...], "keywords": [...]}]}``, and
  every call's arguments are decoded, before the learner's code runs; ``keywords`` (optional) names the
  parameters under which the last arguments are passed (``f(a, b=…)``), the others going by position;
- ``{"event": "timing", "phase": "set_up", ...}`` when they are (the last line written before the learner's
  code runs), and ``{"event": "timing", "phase": "tests", ...}`` after the last call: advisory timestamps
  for benchmarks, which the parent never uses for the verdict (the second could be forged);
- ``{"event": "import_error", ...}`` if the source cannot be imported, otherwise ``{"event": "imported"}``
  and then one ``{"event": "result", "id": ..., "outcome": ...}`` per call, in order;
- ``{"event": "done"}`` at the end.

A call may ask for two more facts. With ``"inputs": true`` the harness keeps an immutable snapshot of the
arguments (each array's dtype, shape and bytes) before the call and compares the arguments with it after
the call and again after the returned value was described; a result then carries ``"changed"``: one
``{"arg": index, "value": ...}`` per argument that differs, described as it is now. With
``"warnings": true`` the call runs under ``warnings.catch_warnings(record=True)`` with the filter
"always" and NumPy's default error handling (divide, overflow and invalid warn), and the result carries
``"warnings"``: the category, its built-in classes, the message and the learner's line of each. A result
that is not a plain return also carries ``"params"``: the parameter names of the learner's function, when
it is a plain function (the parent names arguments with them). An exception is described by its type, its
built-in classes, its message, the learner's line, its errno and ``"own_raise"``: whether a ``raise``
statement of the learner's file raised it (the parent asks for that where a test expects the learner's own
check, which NumPy's error of the same class cannot stand in for).
"""

from __future__ import annotations

# ruff: noqa: E402, I001  (the clock is read before the other imports: their time belongs to the start-up)

import time

# When the interpreter reached this file, on the machine's monotonic clock (the sandbox shares it) and in
# this process's CPU time: the parent splits the sandbox's start from the imports with them.
BOOT_MARK = (time.monotonic(), time.process_time())

import builtins
import contextlib
import json
import math
import opcode
import os
import signal
import sys
import traceback
import types
from typing import Any

MAX_ITEMS = 64  # items of a list, tuple or dict that are reported
MAX_ELEMENTS = 4096  # elements of an array that are reported
MAX_TEXT = 1000  # characters of a message or repr that are reported
MAX_DEPTH = 6
MAX_WARNINGS = 8  # warnings of one call that are reported
RAISE_STATEMENT = opcode.opmap["RAISE_VARARGS"]  # the instruction a `raise` statement compiles to
MAX_PARAMS = 32  # parameter names that are reported
MAX_NAMES = 32  # local names of a failing frame that are described


def apply_limits(spec: str) -> None:
    """Lower this process's rlimits to ``name=value`` pairs such as ``AS=1073741824,CPU=10``."""
    import resource

    for pair in filter(None, spec.split(",")):
        name, value = pair.split("=")
        number = int(value)
        hard = number + 1 if name == "CPU" else number  # SIGXCPU at the soft limit, SIGKILL one second on
        resource.setrlimit(getattr(resource, "RLIMIT_" + name), (number, hard))


def clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def number(value: float) -> float | str:
    """JSON has no NaN or infinity: those travel as the strings "nan", "inf" and "-inf"."""
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def encode(value: Any, depth: int = 0) -> dict[str, Any]:
    """Describe ``value`` with plain JSON types only: what it is, and its numbers."""
    import numpy as np

    if depth > MAX_DEPTH:
        return {"t": "object", "type": type(value).__name__, "repr": "(nested too deeply)"}
    if value is None:
        return {"t": "none"}
    if isinstance(value, bool | np.bool_):
        return {"t": "bool", "v": bool(value)}
    if isinstance(value, int | np.integer):
        integer = int(value)
        if abs(integer) < 10**15:
            return {"t": "int", "v": integer}
        return {"t": "float", "v": number(float(integer))}
    if isinstance(value, float | np.floating):
        return {"t": "float", "v": number(float(value))}
    if isinstance(value, str):
        return {"t": "str", "v": clip(value)}
    if isinstance(value, tuple | list):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {"t": kind, "n": len(value), "items": [encode(item, depth + 1) for item in value[:MAX_ITEMS]]}
    if isinstance(value, dict):
        pairs = list(value.items())[:MAX_ITEMS]
        return {
            "t": "dict",
            "n": len(value),
            "items": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in pairs],
        }
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and value.size <= MAX_ELEMENTS:
        flat = [number(float(x)) if value.dtype.kind == "f" else int(x) for x in value.ravel().tolist()]
        return {"t": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape), "data": flat}
    try:
        text = repr(value)
    except BaseException as error:  # a learner's __repr__ may raise anything
        text = f"(repr failed with {type(error).__name__})"
    shape = getattr(value, "shape", None)
    described: dict[str, Any] = {"t": "object", "type": type(value).__name__, "repr": clip(text)}
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        described["shape"] = list(shape)
    return described


def decode(value: Any) -> Any:
    """Turn a job's argument back into Python: ``{"array": rows, "dtype": ...}`` becomes an ndarray and
    ``{"dict": {name: argument}}`` a dict of such arguments.

    >>> decode({"dict": {"b": {"array": [1, 2], "dtype": "int64"}, "h": 2}})
    {'b': array([1, 2]), 'h': 2}
    >>> decode([{"array": [1.5], "dtype": "float32"}, 3])
    [array([1.5], dtype=float32), 3]
    """
    import numpy as np

    if isinstance(value, dict) and "dict" in value:
        return {key: decode(item) for key, item in value["dict"].items()}
    if isinstance(value, dict):
        return np.array(value["array"], dtype=value["dtype"])
    if isinstance(value, list):  # a list that holds arrays; lists of numbers come back as they were
        return [decode(item) for item in value]
    return value


# Python's own exception classes, taken before the learner's code runs (it could rebind the names).
BUILTIN_EXCEPTIONS = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
FUNCTION_TYPE = types.FunctionType


class Tools:
    """NumPy's and the warnings module's functions, taken once NumPy is imported and before the learner's
    code runs, so that rebinding ``np.frombuffer`` or ``warnings.catch_warnings`` changes nothing here.
    (The methods of ``np.ndarray`` itself cannot be rebound: it is a built-in type.)"""

    def __init__(self) -> None:
        import warnings

        import numpy as np

        self.ndarray = np.ndarray
        self.tobytes = np.ndarray.tobytes
        self.frombuffer = np.frombuffer
        self.isnan = np.isnan
        self.equal = np.equal
        self.errstate = np.errstate
        self.catch_warnings = warnings.catch_warnings
        self.simplefilter = warnings.simplefilter
        # This file's own functions too: rebinding a global of the harness (``__main__``) changes nothing.
        self.rough_size = rough_size
        self.report_left: float = float("inf")  # bytes the report may still grow by (the job's bound)
        self.snapshot = snapshot
        self.unchanged = unchanged
        self.changed_arguments = changed_arguments


def snapshot(value: Any, tools: Tools, depth: int = 0) -> Any:
    """An immutable record of an argument: arrays as (dtype, shape, bytes), containers item by item.

    The record holds no object the learner's code receives, so nothing the call does can change it.
    """
    kind = type(value)
    if depth > MAX_DEPTH:
        return ("deep",)
    if kind is tools.ndarray:
        return ("array", value.dtype.str, value.shape, tools.tobytes(value))
    if kind is list or kind is tuple:
        return (kind.__name__, tuple(tools.snapshot(item, tools, depth + 1) for item in value))
    if kind is dict:
        return ("dict", tuple((key, tools.snapshot(item, tools, depth + 1)) for key, item in value.items()))
    if kind is float:
        return ("float", repr(value))  # nan == nan here, and -0.0 is not 0.0
    return ("value", kind, value)  # int, str, bool, None: immutable


def unchanged(record: Any, value: Any, tools: Tools) -> bool:
    """Whether ``value`` still matches its snapshot: the same types, dtypes, shapes and values."""
    tag = record[0]
    if tag == "array":
        if type(value) is not tools.ndarray or value.dtype.str != record[1] or value.shape != record[2]:
            return False
        now = tools.tobytes(value)
        if now == record[3]:
            return True
        # Bytes differ: equal values may still differ in bits (another NaN, or -0.0 for 0.0).
        before, after = tools.frombuffer(record[3], record[1]), tools.frombuffer(now, record[1])
        same = tools.equal(before, after)
        if before.dtype.kind in "fc":
            same = same | (tools.isnan(before) & tools.isnan(after))
        return bool(same.all())
    if tag in ("list", "tuple"):
        items = record[1]
        return (
            type(value) is (list if tag == "list" else tuple)
            and len(value) == len(items)
            and all(tools.unchanged(item, now, tools) for item, now in zip(items, value, strict=True))
        )
    if tag == "dict":
        pairs = record[1]
        if type(value) is not dict or len(value) != len(pairs):
            return False
        return all(key in value and tools.unchanged(item, value[key], tools) for key, item in pairs)
    if tag == "float":
        return type(value) is float and repr(value) == record[1]
    if tag == "value":
        return type(value) is record[1] and value == record[2]
    return True  # nested too deeply to be recorded


def changed_arguments(records: list[Any], args: tuple[Any, ...], tools: Tools) -> list[int]:
    """The positions of the arguments that no longer match their snapshots."""
    changed = []
    for index, (record, value) in enumerate(zip(records, args, strict=True)):
        try:
            same = tools.unchanged(record, value, tools)
        except BaseException:  # an object the learner put into a dict or list may raise anything
            same = False
        if not same:
            changed.append(index)
    return changed


def describe_warnings(caught: list[Any]) -> list[dict[str, Any]]:
    """Each recorded warning's category, its built-in classes, message and the learner's line."""
    described = []
    for record in caught[:MAX_WARNINGS]:
        category = record.category if isinstance(record.category, type) else type(record.message)
        bases = [cls.__name__ for cls in category.__mro__ if BUILTIN_EXCEPTIONS.get(cls.__name__) is cls][
            :16
        ] or ["Warning"]
        described.append(
            {
                "category": clip(str(category.__name__)),
                "bases": bases,
                "message": clip(safe_message(record.message)),
                "line": record.lineno if record.filename == "solution.py" else None,
            }
        )
    return described


def safe_message(message: Any) -> str:
    try:
        return str(message)
    except BaseException:
        return "(the warning's message could not be shown)"


def parameter_names(function: Any) -> list[str] | None:
    """The names of a plain function's positional parameters, in order; None for any other callable."""
    if type(function) is not FUNCTION_TYPE:
        return None
    code = function.__code__
    names = list(code.co_varnames[: code.co_argcount])
    if len(names) > MAX_PARAMS or not all(
        type(n) is str and n.isidentifier() and len(n) <= 64 for n in names
    ):
        return None
    return names


def builtin_bases(error: BaseException) -> list[str]:
    """The built-in exception classes ``error`` is an instance of, nearest first (its own, if built in).

    A class of the learner's that is merely *named* ValueError is not one: only the real classes count.
    """
    return [cls.__name__ for cls in type(error).__mro__ if BUILTIN_EXCEPTIONS.get(cls.__name__) is cls][:16]


def describe_error(error: BaseException) -> dict[str, Any]:
    """The exception's type, its built-in classes, message and the learner's part of the traceback."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == "solution.py"]
    detail: dict[str, Any] = {
        "type": clip(type(error).__name__),  # a class may be named by 200,000 characters
        "bases": builtin_bases(error),
        "message": clip(safe_str(error)),
        "line": frames[-1].lineno if frames else None,
        "errno": error.errno if isinstance(error, OSError) and isinstance(error.errno, int) else None,
        "own_raise": raised_by_a_raise_statement(error),
    }
    if isinstance(error, SyntaxError):
        detail["line"] = error.lineno if isinstance(error.lineno, int) else None
        detail["message"] = clip(str(error.msg))
    if isinstance(error, SystemExit):
        detail["message"] = clip(repr(error.code))
    return detail


def failing_place(error: BaseException, tools: Tools) -> dict[str, Any]:
    """Where in the learner's file the exception arose, and what the names of that frame held: the
    columns of the failing expression on its line (``"span"``), and each local name's array shape and
    dtype or, for anything else, its type's name (``"names"``). The parent reads the line's syntax tree
    and writes the sentence; nothing is described here that would run the learner's code (an array's
    shape and dtype are read through NumPy's own descriptors, not a subclass's)."""
    try:
        tb = error.__traceback__
        frame, lasti = None, -1
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "solution.py":
                frame, lasti = tb.tb_frame, tb.tb_lasti
            tb = tb.tb_next
        if frame is None:
            return {}
        positions = list(frame.f_code.co_positions())
        line, end_line, column, end_column = (
            positions[lasti // 2] if 0 <= lasti // 2 < len(positions) else (None,) * 4
        )
        span = (
            [line, column, end_column]
            if line == end_line and None not in (line, column, end_column)
            else None
        )
        names: dict[str, Any] = {}
        for name, value in list(frame.f_locals.items())[:MAX_NAMES]:
            if not isinstance(name, str) or len(name) > 64 or not name.isidentifier():
                continue  # a comprehension's hidden ".0", or a name no expression can read
            if isinstance(value, tools.ndarray):
                shape = tools.ndarray.shape.__get__(value)
                names[name] = {
                    "shape": [int(size) for size in shape][:8],
                    "dtype": str(tools.ndarray.dtype.__get__(value))[:32],
                }
            else:
                names[name] = {"type": clip(type(value).__name__)[:64]}
        return {"span": span, "names": names}
    except BaseException:
        return {}


def raised_by_a_raise_statement(error: BaseException) -> bool:
    """Whether a ``raise`` statement of the learner's file raised ``error``: its innermost frame is in
    solution.py and stopped on a raise. An error NumPy or an operator raised (``Q @ K.T`` on mismatched
    shapes) is not one, even where the learner's line is the last of the traceback."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    at = tb.tb_lasti
    return (
        code.co_filename == "solution.py"
        and 0 <= at < len(code.co_code)
        and code.co_code[at] == RAISE_STATEMENT
    )


def safe_str(error: BaseException) -> str:
    try:
        return str(error)
    except BaseException:
        return "(the exception's message could not be shown)"


def rough_size(value: Any, depth: int = 0) -> int:
    """About the bytes :func:`encode` would write for ``value``, found without writing them (cheap)."""
    import numpy as np

    if depth > MAX_DEPTH:
        return 128
    if isinstance(value, np.ndarray):
        return 96 + 24 * int(value.size) if value.size <= MAX_ELEMENTS else 128 + 6 * MAX_TEXT
    if isinstance(value, tuple | list):
        return 48 + sum(rough_size(item, depth + 1) for item in value[:MAX_ITEMS])
    if isinstance(value, dict):
        pairs = list(value.items())[:MAX_ITEMS]
        return 48 + sum(rough_size(k, depth + 1) + rough_size(v, depth + 1) for k, v in pairs)
    return 64


class Reporter:
    """Writes one JSON line per event to the report descriptor, counting the bytes written."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.write = os.write
        self.dumps = json.dumps
        self.sent = 0

    def send(self, event: dict[str, Any]) -> None:
        data = (self.dumps(event, allow_nan=False) + "\n").encode()
        self.sent += len(data)
        while data:
            data = data[self.write(self.fd, data) :]


def call_once(function: Any, decoded: list[Any], call: dict[str, Any], tools: Tools) -> dict[str, Any]:
    """Call the learner's function once and describe what happened, with the facts the call asked for.

    The arguments are held in a tuple, which the learner's code cannot change: swapping an entry of a
    list it finds in this frame for an untouched copy hides nothing.
    """
    args = tuple(decoded)
    names = call.get("keywords") or []
    split = len(args) - len(names)
    positional, by_name = args[:split], {name: args[split + i] for i, name in enumerate(names)}
    check_inputs, record_warnings = call.get("inputs") is True, call.get("warnings") is True
    records = [tools.snapshot(arg, tools) for arg in args] if check_inputs else []
    caught: list[Any] = []
    report: dict[str, Any]
    try:
        if record_warnings:
            with (
                tools.catch_warnings(record=True) as caught,
                tools.errstate(divide="warn", over="warn", invalid="warn"),
            ):
                tools.simplefilter("always")
                returned = function(*positional, **by_name)
        else:
            returned = function(*positional, **by_name)
    except BaseException as error:
        report = {"outcome": "raised", **describe_error(error), "params": safe_params(function)}
        report.update(failing_place(error, tools))
    else:
        changed = tools.changed_arguments(records, args, tools) if check_inputs else []
        try:
            # A value far larger than the report may hold (the job's report_bytes) is not written out:
            # writing it would only cost time before the grader stops reading.
            size = tools.rough_size(returned)
        except BaseException:
            size = 0
        if size > tools.report_left:
            return {"outcome": "oversized", "bytes": size}
        try:
            described = encode(returned)
        except BaseException as error:
            described = {"t": "object", "type": type(returned).__name__, "repr": safe_str(error)}
        report = {"outcome": "returned", "value": described}
        if check_inputs:
            # Again after the returned value was described: describing it may run the learner's code.
            changed = sorted(set(changed) | set(tools.changed_arguments(records, args, tools)))
            report["changed"] = [{"arg": index, "value": safe_encode(args[index])} for index in changed]
            if changed:
                report["params"] = safe_params(function)
    if record_warnings:
        report["warnings"] = describe_warnings(list(caught) if isinstance(caught, list) else [])
    return report


def safe_encode(value: Any) -> dict[str, Any]:
    try:
        return encode(value)
    except BaseException as error:
        return {"t": "object", "type": "object", "repr": safe_str(error)}


def safe_params(function: Any) -> list[str] | None:
    try:
        return parameter_names(function)
    except BaseException:
        return None


def mark() -> dict[str, float]:
    """Now, on the monotonic clock and in this process's CPU time (advisory timing data)."""
    return {"t": time.monotonic(), "cpu": time.process_time()}


def run(reporter: Reporter) -> None:
    tools, perform = Tools(), call_once  # bound here, before the learner's code can rebind the globals
    job = json.loads(sys.stdin.buffer.read())
    os.close(0)
    os.open(os.devnull, os.O_RDONLY)  # becomes fd 0 again: the learner's input() sees end of file
    # Every input is decoded once, before the learner's code runs (which could otherwise patch np.array).
    inputs = [[decode(arg) for arg in call["args"]] for call in job["calls"]]
    reporter.send({"event": "timing", "phase": "set_up", **mark()})
    solution = types.ModuleType("solution")
    solution.__file__ = "solution.py"
    sys.modules["solution"] = solution
    try:
        exec(compile(job["source"], "solution.py", "exec"), solution.__dict__)
    except BaseException as error:
        reporter.send({"event": "import_error", **describe_error(error)})
        return
    reporter.send({"event": "imported"})  # from here on, a silent end belongs to the test being run
    budget = job.get("report_bytes")
    for call, args in zip(job["calls"], inputs, strict=True):
        tools.report_left = budget - reporter.sent if isinstance(budget, int) else float("inf")
        function = solution.__dict__.get(call["function"])
        if function is None:
            reporter.send({"event": "result", "id": call["id"], "outcome": "missing"})
            continue
        if not callable(function):
            reporter.send({"event": "result", "id": call["id"], "outcome": "not_callable"})
            continue
        reporter.send({"event": "result", "id": call["id"], **perform(function, args, call, tools)})
    reporter.send({"event": "timing", "phase": "tests", **mark()})


def main() -> None:
    """A freshly started interpreter: rlimits first, then NumPy, then the one job."""
    report_fd, limits, site_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    # A server started with SIGINT ignored (nohup, a job in the background) passes that on, and Python
    # then installs no KeyboardInterrupt: the learner's code gets Python's own default, as anywhere else.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    apply_limits(limits)
    keep_starters_priority()
    sys.path.append(site_dir)  # holds NumPy and nothing else
    import numpy  # noqa: F401  (imported before the job arrives: this is what makes a warm spare warm)

    serve(report_fd, {"boot": {"t": BOOT_MARK[0], "cpu": BOOT_MARK[1]}})


AUTOGROUP_TRIES, AUTOGROUP_RETRY_S = 50, 0.02


def keep_starters_priority() -> None:
    """Give this session's scheduling group the nice value this thread inherited from its starter.

    bubblewrap starts a new session, and where the kernel groups by session it starts a new group at nice
    0, whatever the starter's: a sandbox started by a background thread (a regrade) would then weigh as
    much as a live learner's. Raising a nice value needs no privilege; lowering it needs one the sandbox
    lacks, so the program cannot undo this.
    """
    nice = os.nice(0)
    if nice <= 0:
        return
    # The kernel takes one such change a tenth of a second, machine-wide, from a process without
    # CAP_SYS_ADMIN, and answers EAGAIN to the rest: sandboxes starting together would otherwise keep
    # nice 0 groups. So a refused change is tried again, for a second at most.
    for _ in range(AUTOGROUP_TRIES):
        try:
            with open("/proc/self/autogroup", "w") as group:
                group.write(str(nice))
            return
        except BlockingIOError:
            time.sleep(AUTOGROUP_RETRY_S)
        except OSError:  # no autogroups here, or /proc is not this process's
            return


def serve(report_fd: int, marks: dict[str, dict[str, float]]) -> None:
    """Say ``ready`` (with ``marks`` and now), run the one job, say ``done`` and exit; never returns.

    Called by :func:`main`, or in a child of the zygote (``zygote.py``), which imported NumPy long before.
    """
    os.set_inheritable(report_fd, False)  # the learner's child processes do not get the channel
    reporter = Reporter(report_fd)
    reporter.send({"event": "ready", "marks": {**marks, "ready": mark()}})
    try:
        run(reporter)
        reporter.send({"event": "done"})
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
