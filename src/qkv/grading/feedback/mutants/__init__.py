"""Mutants of a reference solution: wrong versions derived by generic operators on its syntax tree.

A lesson's reference solution is a small NumPy program. Most learners' mistakes are one small change of
it: a transposed operand, a sum over another axis, a scale dropped or not square-rooted, an index off by
one, two arguments swapped, one size used for another, a different reduction. :func:`mutations` lists
every such change the operators below can make (each with its words and the reference's line), and
:class:`Mutants` compiles them (alone, and in pairs on demand) once per reference and finds the mutant
whose results equal the learner's.

The operators (each a function of one node of the tree), by family: ``arithmetic.py``,
``numpy_calls.py`` and ``names.py``; :func:`mutations` (``listing.py``) lists their changes and
``compiled.py`` builds the mutants:

========================  ===============================================================================
``transpose``             an operand of ``@`` transposed, or a ``.T`` / ``.transpose(...)`` dropped
``drop``                  one operand of ``*``, ``/``, ``+``, ``-``, ``//`` dropped (a scale, a shift);
                          the right operand of ``@`` (a projection forgotten: ``X @ W`` → ``X``)
``axis``                  ``axis=`` changed (``-1``, ``0``, ``1``, ``-2``) or dropped (the whole array)
``keepdims``              ``keepdims=True`` dropped
``sqrt``                  a square root dropped, or added under a division or product
``scale``                 ``/`` for ``*`` and back
``constant``              a number changed (whole numbers ±1, others ×2 and ÷2)
``index``                 a constant index, ``k=`` or ``[:n]`` bound shifted by one; ``<`` for ``<=`` …;
                          a comparison negated (``>=`` for ``<``)
``swap``                  two arguments of a call, two operands of ``@``, ``-``, ``/``, two returned items
``size``                  one named size of the function used for another
``operand``               another array of the function as an operand of ``@``, ``*``, ``+``, ``-``
``in_place``              ``x = x op y`` written ``x op= y``; a conversion (``np.asarray``) dropped
``reduction``             ``sum``/``mean``, ``max``/``min``, ``var``/``std``, ``tril``/``triu`` exchanged
``call``                  a one-argument NumPy function or function of the reference dropped
                          (``np.exp(x)`` → ``x``, ``normed(S)`` → ``S``)
``check``                 a check that raises left out (``if cond: raise …`` as if ``cond`` were false)
``exception``             a check's exception of another class (``TypeError`` for ``ValueError``)
``strict``                a check ``a.shape[1] != b.shape[1]`` that compares a third array too
``ddof``                  a variance or standard deviation with ``ddof=1`` (divided by the count − 1)
``default``               a parameter read replaced by its default (``1e-05`` for a given ``eps``)
``placement``             a term moved out of a one-argument call or into it (``np.sqrt(v) + eps``)
``sibling``               a numbered name, attribute or key for its sibling (``ln1_g`` for ``ln2_g``),
                          one at a time or all the arguments of a call at once
``residual``              around a sum ``x + branch``: a call on ``x`` in the branch moved around the
                          sum (normalised after the residual), the residual taken from that call, or
                          the input added to a sum once more (:mod:`qkv.grading.feedback.rewrites`)
========================  ===============================================================================

The mutants run in the grader's own process, on the grader's copies of the test's inputs: they are the
lesson's reference with one or two small changes, never the learner's code, so the verdict stays judged
outside the sandbox. A mutant that raises counts as no result.
"""

from qkv.grading.feedback.mutants.changes import Mutation
from qkv.grading.feedback.mutants.compiled import Mutant, Mutants, mutants_for, prepare, prepare_in_background
from qkv.grading.feedback.mutants.listing import PRIORITY, mutations

__all__ = [
    "PRIORITY",
    "Mutant",
    "Mutants",
    "Mutation",
    "mutants_for",
    "mutations",
    "prepare",
    "prepare_in_background",
]
