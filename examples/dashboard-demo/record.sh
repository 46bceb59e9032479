#!/bin/sh
# Record every commit of the demo repository as the CI workflow's "Record this commit" step
# would on each push: usage: record.sh REPO [STEADYBENCH]
set -eu
repo=$1
sb=${2:-steadybench}
cd "$repo"
export STEADYBENCH_MACHINE=ci-runner
for sha in $(git rev-list --reverse main); do
  git checkout -q "$sha"
  "$sb" run benchmarks/bench.py --history -p 8 --clock thread_time -q > /dev/null
done
git checkout -q main
