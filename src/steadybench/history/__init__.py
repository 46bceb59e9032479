"""The results history: every command can record its results (``--history``), and
``steadybench history`` lists, shows, compares, draws trends and finds regressions over them.

See ``docs/history.md``. The store is SQLite by default (``.steadybench/history.sqlite`` at the
top of the project's git repository) or PostgreSQL by URL; :mod:`~steadybench.history.store`.
"""
