"""mask-grid: toggle which keys each query may attend (or pick a preset) and watch the weights and the
outputs follow; a query left with no key shows qkv's policies (zero, nan, raise) and the -1e9 shortcut.

Settings: ``Q``, ``K``, ``V`` (1 to 5 queries, 2 to 5 keys) and ``padding_length`` (the padding preset).
Every number of every possible mask row is computed here, so the script only looks them up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from qkv import attention, attention_scores, causal_mask, softmax
from qkv.grading.display import format_value

SETTINGS = ("Q", "K", "V", "padding_length")
MOST = 5  # queries and keys: 2**5 masks per row stay a small config
LARGE_NEGATIVE = -1e9  # the common shortcut for -inf, shown next to qkv's three policies


def _arrays(settings: Mapping[str, Any]) -> tuple[np.ndarray[Any, Any], ...]:
    return tuple(np.asarray(settings[key], dtype=float) for key in ("Q", "K", "V"))


def check(settings: Mapping[str, Any], names: Mapping[str, Any]) -> list[str]:
    problems = [f"The mask grid needs '{key}'." for key in ("Q", "K", "V") if key not in settings]
    problems += [
        f"Unknown setting '{key}' (known: {', '.join(SETTINGS)})."
        for key in sorted(set(settings) - set(SETTINGS))
    ]
    if problems:
        return problems
    try:
        attention(settings["Q"], settings["K"], settings["V"])
    except (TypeError, ValueError) as error:
        return [f"Q, K and V do not fit together: {error}"]
    n_q, n_k = len(settings["Q"]), len(settings["K"])
    if not (1 <= n_q <= MOST and 2 <= n_k <= MOST):
        problems.append(f"The mask grid shows 1 to {MOST} queries and 2 to {MOST} keys, not {n_q} and {n_k}.")
    length = settings.get("padding_length", n_k - 1)
    if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= n_k:
        problems.append(f"padding_length must be a whole number from 1 to {n_k}, not {length!r}.")
    return problems


def _finite_or_none(values: np.ndarray[Any, Any]) -> list[float | None]:
    """JSON has no NaN: the nan policy's entries travel as null."""
    return [float(v) if np.isfinite(v) else None for v in values]


def _rows(Q: Any, K: Any, V: Any) -> list[list[dict[str, Any] | None]]:
    """rows[i][bits]: query i's weights and output when the keys it may attend are the set bits."""
    rows: list[list[dict[str, Any] | None]] = []
    for i in range(len(Q)):
        entries: list[dict[str, Any] | None] = [None]  # bits 0: no key left, see _dead
        for bits in range(1, 1 << len(K)):
            allowed = [[bool(bits >> j & 1) for j in range(len(K))]]  # (1, n_k)
            O, A = attention(Q[i : i + 1], K, V, mask=allowed, return_weights=True)  # (1, d_v), (1, n_k)
            entries.append({"weights": A[0].tolist(), "output": O[0].tolist()})
        rows.append(entries)
    return rows


def _dead(Q: Any, K: Any, V: Any) -> dict[str, list[dict[str, Any]]]:
    """Every query's weights and output with no key allowed, under each policy the widget offers."""
    nothing = np.zeros((len(Q), len(K)), dtype=bool)
    dead: dict[str, list[dict[str, Any]]] = {}
    for policy in ("zero", "nan"):
        O, A = attention(Q, K, V, mask=nothing, all_masked=policy, return_weights=True)
        dead[policy] = [
            {"weights": _finite_or_none(A[i]), "output": _finite_or_none(O[i])} for i in range(len(Q))
        ]
    A = softmax(np.where(nothing, attention_scores(Q, K), LARGE_NEGATIVE))  # every score equal: uniform
    dead["fill"] = [{"weights": A[i].tolist(), "output": (A @ V)[i].tolist()} for i in range(len(Q))]
    return dead


def _errors(Q: Any, K: Any, V: Any) -> dict[str, str]:
    """The raise policy: qkv's own sentence for each set of fully masked rows (a bit per query)."""
    errors: dict[str, str] = {}
    for bits in range(1, 1 << len(Q)):
        mask = np.ones((len(Q), len(K)), dtype=bool)
        mask[[i for i in range(len(Q)) if bits >> i & 1]] = False
        try:
            attention(Q, K, V, mask=mask, all_masked="raise")
        except ValueError as error:
            errors[str(bits)] = str(error)
    return errors


def config(settings: Mapping[str, Any], names: Mapping[str, Any]) -> dict[str, Any]:
    Q, K, V = _arrays(settings)  # (n_q, d_k), (n_k, d_k), (n_k, d_v)
    n_q, n_k = len(Q), len(K)
    length = int(settings.get("padding_length", n_k - 1))
    causal = causal_mask(n_q, n_k)  # (n_q, n_k)
    presets = {
        "all": np.ones((n_q, n_k), dtype=bool),
        "causal": causal,
        "padding": np.broadcast_to(np.arange(n_k) < length, (n_q, n_k)),
        "no-diagonal": causal & ~np.eye(n_q, n_k, dtype=bool),
        "none": np.zeros((n_q, n_k), dtype=bool),
    }
    return {
        "Q": Q.tolist(),
        "K": K.tolist(),
        "V": V.tolist(),
        "scores": attention_scores(Q, K).tolist(),
        "rows": _rows(Q, K, V),
        "dead": _dead(Q, K, V),
        "errors": _errors(Q, K, V),
        "padding_length": length,
        "presets": {name: mask.tolist() for name, mask in presets.items()},
        "initial": "causal",
    }


def render(settings: Mapping[str, Any], names: Mapping[str, Any]) -> str:
    Q, K, V = _arrays(settings)
    mask = causal_mask(len(Q), len(K))  # (n_q, n_k): the widget starts on the causal preset
    O, A = attention(Q, K, V, mask=mask, return_weights=True)  # (n_q, d_v), (n_q, n_k)
    head = "".join(f'<th scope="col">key {j}</th>' for j in range(len(K)))
    body = "".join(
        f'<tr><th scope="row">query {i}</th>'
        + "".join(
            f"<td>{format_value(float(w)) if ok else '−∞ (masked)'}</td>"
            for w, ok in zip(A[i], mask[i], strict=True)
        )
        + f"<td>{format_value([round(float(v), 6) for v in O[i]])}</td></tr>"
        for i in range(len(Q))
    )
    return (
        '<p class="widget-inputs">The causal mask (query i sees keys j ≤ i) on Q = '
        f"{format_value(settings['Q'])}, K = {format_value(settings['K'])}, "
        f"V = {format_value(settings['V'])}:</p>"
        f'<table class="mask-table"><thead><tr><th scope="col">weights</th>{head}'
        f'<th scope="col">output</th></tr></thead><tbody>{body}</tbody></table>'
    )
