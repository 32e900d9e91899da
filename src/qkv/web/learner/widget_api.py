"""The qkv library over HTTP, for widgets whose learner changes the inputs: projections and attention steps.

Routes only translate HTTP to calls of the qkv library (``qkv.project_qkv``, ``qkv.attention``); they
save nothing and know no widget: any widget's script may call them. They refuse numbers whose result would
give away a lesson's answer the learner has not typed yet (``widget_guard``): a lesson's page asks its own
guarded route for those.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, HTTPException, Request
from pydantic import Field

from qkv import attention, attention_scores, project_qkv
from qkv.web.http.jsonsafe import finite_or_none
from qkv.web.http.request_bodies import StrictBody
from qkv.web.learner.widget_guard import refuse_unearned

router = APIRouter(prefix="/api", tags=["lesson API"])

Number = Annotated[float, Field(allow_inf_nan=False)]
Vector = Annotated[list[Number], Field(min_length=1, max_length=64)]
Matrix = Annotated[list[Vector], Field(min_length=1, max_length=64)]


class ProjectIn(StrictBody):
    """One hidden vector and the three weight matrices, as rows."""

    x: Vector = Field(examples=[[1, 2]])
    Wq: Matrix = Field(examples=[[[1, 0], [1, 1]]])
    Wk: Matrix = Field(examples=[[[0, 1], [1, 0]]])
    Wv: Matrix = Field(examples=[[[2, 0], [0, 2]]])


class AttentionIn(StrictBody):
    """One query against a few keys and values, optionally with the causal mask at the query's position."""

    q: Vector = Field(examples=[[1, 0]])
    K: Matrix = Field(examples=[[[1, 0], [0, 1]]])
    V: Matrix = Field(examples=[[[2, 0], [0, 2]]])
    causal: bool = False
    causal_index: int = Field(default=0, ge=0, le=63)


@router.post(
    "/project",
    summary="q, k, v for one hidden vector (qkv.project_qkv)",
    responses={403: {"description": "The result would give away an answer of a lesson not yet typed."}},
)
def post_project(body: ProjectIn, request: Request) -> dict[str, Any]:
    """``qkv.project_qkv`` on one row; shape problems come back as 422 with the library's sentence."""
    result = projection(body)
    _guard(request, [result["q"], result["k"], result["v"]], project_inputs(body))
    return result


def projection(body: ProjectIn) -> dict[str, Any]:
    """q, k and v for the body's hidden vector: the reply of ``POST /api/project``.

    Raises
    ------
    fastapi.HTTPException
        422 with the library's sentence when the vector and the matrices do not fit together.
    """
    try:
        with np.errstate(all="ignore"):  # overflow to inf is reported as null, not as a warning
            Q, K, V = project_qkv([body.x], body.Wq, body.Wk, body.Wv)
    except (ValueError, TypeError) as error:
        raise HTTPException(422, str(error)) from None
    result: dict[str, Any] = finite_or_none({"q": Q[0], "k": K[0], "v": V[0]})
    return result


def project_inputs(body: ProjectIn) -> list[Any]:
    """What a projection is computed from, for the guard to tell a lesson's own numbers."""
    return [body.x, body.Wq, body.Wk, body.Wv]


@router.post(
    "/attention",
    summary="Every step of attention for one query (qkv.attention)",
    responses={403: {"description": "The result would give away an answer of a lesson not yet typed."}},
)
def post_attention(body: AttentionIn, request: Request) -> dict[str, Any]:
    """Scores, scaled scores, the masked row, softmax weights and the output for one query."""
    steps = attention_steps(body)
    _guard(request, [steps[name] for name in STEP_VECTORS], [body.q, body.K, body.V])
    return steps


def _guard(request: Request, shown: list[Any], inputs: list[Any]) -> None:
    """403 with a sentence when ``shown`` (computed from ``inputs``) holds an answer of a lesson the
    learner has not typed yet."""
    services = request.app.state.qkv
    learner = services.identity.learner(request)
    refuse_unearned(services, learner.id, shown, inputs)


def attention_steps(body: AttentionIn) -> dict[str, Any]:
    """Every step of attention for the body's query: the reply of ``POST /api/attention``.

    Raises
    ------
    fastapi.HTTPException
        422 with a sentence when the query, keys and values do not fit together, or the causal position
        is past the last key.
    """
    n_k = len(body.K)
    if body.causal and body.causal_index >= n_k:
        raise HTTPException(
            422,
            f"causal_index is {body.causal_index}, but with {n_k} keys the query's position must be "
            f"between 0 and {n_k - 1}.",
        )
    try:
        with np.errstate(all="ignore"):
            scores = attention_scores([body.q], body.K, scale=1.0)[0]  # (n_k,)
            scaled = attention_scores([body.q], body.K)[0]  # (n_k,)
            allowed = np.arange(n_k) <= body.causal_index if body.causal else np.ones(n_k, dtype=bool)
            output, weights = attention([body.q], body.K, body.V, mask=allowed[None, :], return_weights=True)
    except (ValueError, TypeError) as error:
        raise HTTPException(422, str(error)) from None
    masked = np.where(allowed, scaled, -np.inf)  # -inf becomes null in the response
    steps = {"scores": scores, "scaled": scaled, "masked": masked, "weights": weights[0], "output": output[0]}
    result: dict[str, Any] = finite_or_none(steps)
    return {**result, "d_k": len(body.q), "allowed": allowed.tolist()}


STEP_VECTORS = ("scores", "scaled", "masked", "weights", "output")
"""The numbers of an attention reply that a learner reads as results (``d_k`` and ``allowed`` are inputs)."""
