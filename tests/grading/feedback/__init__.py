"""Tests of qkv.grading.feedback: explaining a failure."""
