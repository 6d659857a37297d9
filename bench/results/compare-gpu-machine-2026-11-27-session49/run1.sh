#!/bin/bash
# session 49 device call 1: variants c4eb556 vs 02e06e8 one thread; then 16-thread runs with and without glibc
# malloc tunables that keep freed memory (no munmap) to test whether the end-of-call share is the unmapping.
set -u
mkdir -p $OUT/v $OUT/t
OUT=$OUT/v bash bench/variants_host.sh .cmp/c4eb556.tar .cmp/02e06e8.tar > $OUT/v/log.txt 2>&1
echo "variants rc $?"
B=/tmp/memhier-variant-02e06e8/bench/memhier_bench_sim
which perf > $OUT/t/tools.txt 2>&1; nproc >> $OUT/t/tools.txt; lscpu | grep -i 'model name' >> $OUT/t/tools.txt
TUN='glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296'
for round in 1 2 3; do
  for mode in default keep; do
    if [ $mode = keep ]; then export GLIBC_TUNABLES=$TUN; else unset GLIBC_TUNABLES; fi
    $B --benchmark_filter='BM_Sim(Streaming|RandomGather|TransposeTiled)/16/' --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true > $OUT/t/$mode-round$round.txt 2>&1
    unset GLIBC_TUNABLES
  done
done
for f in $OUT/t/*-round*.txt; do echo "== $(basename $f)"; grep median $f; done > $OUT/t/summary.txt
cat $OUT/v/summary.txt; cat $OUT/t/summary.txt | sed 's/ \+/ /g' | cut -c1-200
cd $OUT/t && tar -czf raw.tar.gz *-round*.txt && rm -f *-round*.txt
