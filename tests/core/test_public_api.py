"""The public surface of ``import qkv``: exactly these names, each documented with runnable examples."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import qkv

PUBLIC = {
    "BLOCK_PARAMS",
    "__version__",
    "attention",
    "attention_scores",
    "causal_mask",
    "gelu",
    "layer_norm",
    "merge_heads",
    "multi_head_attention",
    "output_shape",
    "param_count",
    "project_qkv",
    "qkv_shapes",
    "softmax",
    "split_heads",
    "transformer_block",
}


def test_all_lists_exactly_the_public_api() -> None:
    assert set(qkv.__all__) == PUBLIC
    assert len(qkv.__all__) == len(PUBLIC)
    for name in qkv.__all__:
        assert hasattr(qkv, name), name


def test_every_public_function_has_numpydoc_sections_and_examples() -> None:
    for name in sorted(PUBLIC - {"__version__", "BLOCK_PARAMS"}):
        doc = inspect.getdoc(getattr(qkv, name)) or ""
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert f"{section}\n---" in doc, f"{name} lacks a {section} section"
        assert ">>> " in doc, f"{name} has no runnable example"


def test_the_core_imports_nothing_of_ours_beyond_itself() -> None:
    core = Path(qkv.__file__).parent
    allowed = {
        "qkv",
        "qkv._validate",
        "qkv.attention",
        "qkv.projection",
        "qkv._blocked",
        "qkv.multihead",
        "qkv.transformer",
    }
    for module in (
        "attention.py",
        "projection.py",
        "_validate.py",
        "multihead.py",
        "transformer.py",
        "__init__.py",
    ):
        tree = ast.parse((core / module).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("qkv"):
                assert node.module in allowed, f"{module} imports {node.module}"


def test_version_is_a_version_string() -> None:
    assert qkv.__version__.count(".") == 2
