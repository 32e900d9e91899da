"""Tests of qkv.store.instructor."""
