"""What a learner sees: the lesson pages, the learner's API, the widgets' API and files, signing in."""
