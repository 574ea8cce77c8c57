#!/bin/bash
# issue 76's pilot, from the committed code on main (run in /work/main)
set -e
cd /work/main
export PRISMLIB_DATA=/work/shared/data
OUT=/work/runs/pilot
mkdir -p $OUT
date
# speed: every size at 1 and 2 threads, masked head, SDPA, no compile (the pilot's configuration) -> the budget's rate
PYTHONPATH=/work/main .venv/bin/python benchmarks/pretrain_speed.py --sizes 2x128,4x256,4x384 --threads 1,2 --head masked --attn sdpa --compile off --steps 6 --json $OUT/speed.json > $OUT/speed.txt 2>&1
date
# round 1: two sizes in parallel, one thread each, 30 minutes
PYTHONPATH=/work/main OMP_NUM_THREADS=1 .venv/bin/python benchmarks/pretrain_pilot.py --out $OUT --sizes 2x128 --minutes 30 --threads 1 --speed $OUT/speed.json > $OUT/pilot_2x128.log 2>&1 &
PYTHONPATH=/work/main OMP_NUM_THREADS=1 .venv/bin/python benchmarks/pretrain_pilot.py --out $OUT --sizes 4x256 --minutes 30 --threads 1 --speed $OUT/speed.json > $OUT/pilot_4x256.log 2>&1 &
wait
date
PYTHONPATH=/work/main .venv/bin/python benchmarks/pretrain_pilot.py --out $OUT --sizes 2x128,4x256 --project-only --speed $OUT/speed.json > $OUT/projection.txt 2>&1
date
