"""Live A/B comparisons (``steadybench ab``): variants, the interleaved protocol, its report.

* :mod:`.variants` — what can be compared (benchmark files under any interpreter, commands);
* :mod:`.worktrees` — git revisions checked out and built in their own worktrees;
* :mod:`.session` — rounds of randomised interleaved executions with a sequential verdict;
* :mod:`.report` — the answer in words and the JSON record.
"""
