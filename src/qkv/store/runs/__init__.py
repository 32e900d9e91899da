"""Programs waiting for a grader: the jobs of remote grading, their admission, state and verdicts."""
