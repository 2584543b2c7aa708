"""The chaos drill (`make chaos`, `python -m interviewprep.chaos`).

Each round starts the Procfile's processes on a fresh database and Redis servers of its own,
drives concurrent candidates through the REST API, fires a fault schedule drawn from the
round's seed, waits for the system to settle, and checks every invariant and what each
accepted request should have become. It imports nothing of the apps: it sees the product as
an operator does, through its processes, its API, its database and `check_invariants`.
"""
