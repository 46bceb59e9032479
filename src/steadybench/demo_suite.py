"""The built-in demo suite of ``steadybench demo``: a few Python workloads at two sizes.

It is an ordinary benchmark file (the short form), so it also shows how to write one:
``steadybench run $(python -c 'import steadybench.demo_suite as m; print(m.__file__)')``.
"""

import steadybench as sb

SIZES = [100, 10_000]


@sb.benchmark(n=SIZES)
def sort_reversed(n):
    data = list(range(n, 0, -1))  # set-up: once per parameter set, not timed
    return lambda: sorted(data)  # the measured callable


@sb.benchmark(n=SIZES)
def build_dict(n):
    keys = [f"key{i}" for i in range(n)]
    return lambda: dict.fromkeys(keys, 0)


@sb.benchmark(group="sum_of_squares", n=SIZES)
def generator(n):
    return lambda: sum(i * i for i in range(n))


@sb.benchmark(group="sum_of_squares", n=SIZES)
def list_comprehension(n):
    return lambda: sum([i * i for i in range(n)])


@sb.benchmark(n=SIZES)
def join_strings(n):
    words = [str(i) for i in range(n)]
    return lambda: ",".join(words)
