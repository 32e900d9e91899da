"""Running a learner's program safely: bubblewrap, seccomp, cgroups, the warm zygote and the harness
that runs inside the sandbox, the runtime it sees, and how much a report may hold.

It imports nothing of the rest of the grader (``tests/test_layers.py``): it runs programs and
returns raw reports; judging and explaining them is the business of the packages above it.
``harness.py`` and ``zygote.py`` run inside the sandbox and import nothing of ours at all.
"""
