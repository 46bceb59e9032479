"""steadybench: benchmarks whose numbers can be trusted.

The object API follows the Rancid framework (Afonso & Almeida, §V): a :class:`Manager` holds
:class:`Benchmark` objects (implementations × parameter sets), meters, processors and loggers,
and returns :class:`Results`. The short form is the :func:`benchmark` decorator.
"""

__version__ = "0.1.0"
