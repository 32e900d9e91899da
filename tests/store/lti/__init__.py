"""Tests of qkv.store.lti."""
