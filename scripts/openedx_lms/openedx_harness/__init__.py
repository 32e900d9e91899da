"""What edx-platform would provide around the LTI consumer: users' profiles, and the harness's routes."""
