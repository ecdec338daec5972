#!/usr/bin/env bash
# Run the whole suite (full forms) and write benchmarks/results/*.md; pass extra flags through,
# e.g. `benchmarks/run_all.sh --no-fusion-emitters`. Takes tens of minutes on a 2-core CPU.
set -u
cd "$(dirname "$0")/.."
for s in bench_rigid_vs_pinocchio bench_soft_vs_soromox bench_recursive_vs_el bench_scaling bench_papers bench_gpu; do
    echo "=== $s $*"
    python "benchmarks/$s.py" "$@" || echo "!!! $s failed"
done
