# 2026-12-07 09:41-10:00, at 1f2953f + docs, alone on the 2 cores
PRISMLIB_DATA=/work/shared/data .venv/bin/python benchmarks/encoder_orig.py > benchmarks/printouts/2026-12-07-encoder-orig/printout.txt
