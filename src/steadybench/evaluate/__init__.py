"""Rancid's evaluation of a benchmarking method (Afonso & Almeida, §VI), in one command.

``steadybench evaluate`` runs a baseline and a managed preset as interleaved independent
executions (:mod:`.session`), computes Tables 2 and 3, the Fig. 15 boxes, the Fig. 16 error
evolution (:mod:`.stats`, :mod:`.analysis`), flags executions whose runs jump between discrete
levels (:mod:`.levels`), prints the tables (:mod:`.tables`) and draws the figures for the HTML
report (:mod:`.figures`). See ``docs/evaluate.md``.
"""
