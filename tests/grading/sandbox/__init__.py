"""Tests of qkv.grading.sandbox.process: running a program safely."""
