"""Programs graded for the web: the local grading line (``local_queue.py``) and the interface of graders
on other machines (``backend.py``)."""
