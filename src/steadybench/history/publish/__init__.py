"""``steadybench history publish DIR``: the history as a static dashboard (docs/dashboard.md).

:mod:`.collect` reads the store into typed series with their change points; :mod:`.site`
writes the pages, the data files and the vendored chart library (uPlot, MIT).
"""
