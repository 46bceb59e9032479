"""One module per figure of the report; the numbers they draw come from
:mod:`steadybench.output.plotdata` (pure numpy) and :mod:`steadybench.output.comparedata`.

==========================  =====================================================================
module                      figure
==========================  =====================================================================
:mod:`.histogram`           Rancid (001) Fig. 1: histogram, reflected kernel density, median, mean
:mod:`.boxplot`             Rancid Fig. 15: boxes at the quartiles, whiskers at p1 and p99
:mod:`.timeseries`          Rancid Figs. 3–11: run-by-run values, moving median, frequency
:mod:`.fit`                 Moreno & Fischmeister (002) Figs. 2–3: line fit with its band
:mod:`.evolution`           Rancid Fig. 16: error of the running median, relative IQR
:mod:`.growth`              004 ``sweep_seq``: time against size, log–log, fitted class
:mod:`.comparison`          a compared pair and a compared suite (Touati et al., 003)
:mod:`.relative`            time relative to the fastest variant, with intervals
:mod:`.ab`                  the rounds and looks of a live A/B comparison
==========================  =====================================================================

Every axis that carries measured values is robust: the bulk of the data fills it and the
values beyond are drawn at its edge with their count (:func:`.common.mark_outside`).
matplotlib is imported when a figure is drawn, not when this package is imported.
"""
