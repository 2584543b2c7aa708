"""The chaos drill (`make chaos`, `python -m chaos`).

Each round starts the Procfile's processes on a fresh database and Redis servers of its own,
drives concurrent candidates through the REST API, fires a fault schedule drawn from the
round's seed, waits for the system to settle, and checks every invariant and what each
accepted request should have become. It imports nothing of the apps and names none of their
tables: it sees the product as an operator does, through its processes, its HTTP API (`/healthz`,
`/metrics`, the REST API) and its management commands (`check_invariants`, `attempts_state`,
`jobs_state`). Of PostgreSQL it touches only the server: its own databases, and connections cut.
"""
