"""Tests of qkv.store.runs."""
