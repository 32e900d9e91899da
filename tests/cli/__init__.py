"""Tests of qkv.cli: one module per command."""
