"""``python -m steadybench.ab.probe FILE [SELECTOR]``: print ``repr`` of what one call of the
case returns, for ``steadybench ab --check-output`` (run with the variant's own interpreter)."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from ..definitions import find_single_case
    from ..errors import SteadybenchError

    path, selector = argv[0], (argv[1] if len(argv) > 1 and argv[1] else None)
    try:
        implementation, params, _ = find_single_case(path, selector)
    except SteadybenchError as exc:
        print(exc, file=sys.stderr)
        return 1
    implementation.setup(params)
    try:
        implementation.init_run()
        result = implementation.run()
        implementation.release_run()
    finally:
        implementation.teardown()
    print(repr(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
