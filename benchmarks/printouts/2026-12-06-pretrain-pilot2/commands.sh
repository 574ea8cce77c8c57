#!/bin/bash
# issue 76's second pilot (rule: docs/benchmarks.md, committed at f9de38c), run in /work/main
set -e
cd /work/main
export PRISMLIB_DATA=/work/shared/data
OUT=/work/runs/pilot2   # a copy of the first pilot's folder: both runs resume from their 30-minute states
date
PYTHONPATH=/work/main OMP_NUM_THREADS=1 .venv/bin/python benchmarks/pretrain_pilot.py --out $OUT --sizes 2x128 --tokens 32987648 --minutes 80 --threads 1 --speed $OUT/speed.json > $OUT/pilot2_2x128.log 2>&1 &
PYTHONPATH=/work/main OMP_NUM_THREADS=1 .venv/bin/python benchmarks/pretrain_pilot.py --out $OUT --sizes 4x256 --minutes 70 --threads 1 --speed $OUT/speed.json > $OUT/pilot2_4x256.log 2>&1 &
wait
date
PYTHONPATH=/work/main .venv/bin/python benchmarks/pretrain_pilot.py --out $OUT --sizes 2x128,4x256 --project-only --speed $OUT/speed.json > $OUT/projection.txt 2>&1
date
