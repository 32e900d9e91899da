"""Explaining a failure: hints a lesson lists, relations and mutants that name a mistake no hint
lists, crashes named by the failing operation, and the checks that no message quotes the solution.

It never imports the sandbox (``tests/test_layers.py``): it reads what a run returned.
"""
