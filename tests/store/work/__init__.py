"""Tests of qkv.store.work."""
