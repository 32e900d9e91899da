"""Who a learner is: the anonymous learner and its display name, accounts and their merging, a class roster
read from CSV, and a learner's data on request (export, erasure)."""
