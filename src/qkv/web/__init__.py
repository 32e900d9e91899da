"""The web course: the FastAPI app (``app.py``), what its routes share (``services.py``, ``settings.py``).

Its packages, by whom they serve: ``learner`` (the lesson pages, the API and sign-in of learners),
``instructor`` (the class dashboard, timelines, exports), ``lti`` (qkv as an LTI 1.3 tool), ``runs``
(the grading line programs wait in, and the interface of graders on other machines) and ``http`` (the
plumbing every route shares: limits, security headers, signing, error pages). Nothing is imported here,
so importing one part does not import them all.
"""
