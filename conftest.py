"""The repository's root conftest: it loads the test suite's plugin, so that its hooks and shared fixtures
hold for every test, those of ``tests/`` and those in a lesson folder's ``tests/`` alike.

``tests/plugin.py`` holds the hooks (the CI rule that a skip under ``CI=true`` is a failure, the scaled
timeouts, ``--lesson``, the xdist scopes, which files of the lesson content are tests) and the ``grader``;
``tests/web/fixtures.py`` the web tests' fixtures (``app``, ``chromium``, ``live_server``, ``page_errors``).
Loaded as plugins, not as conftests, they apply to a test wherever it lies, a copied content folder's too.
"""

pytest_plugins = ["tests.plugin"]
