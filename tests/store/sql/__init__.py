"""Tests of qkv.store.sql."""
