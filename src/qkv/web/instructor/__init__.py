"""The instructor's view: sign-in, the class dashboard and page, one learner's timeline, the exports."""
