"""Programs graded for the web: the local grading line (``local_queue.py``), how long it may be
(``line_bound.py``), and the interface of graders on other machines (``backend.py``)."""
