"""Tests of qkv.store.learner."""
