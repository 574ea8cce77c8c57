# 2026-12-07 09:17-09:39, at 1f2953f, alone on the 2 cores (only light edits beside it)
.venv/bin/python benchmarks/pretrain_speed.py --sizes 4x256 --threads 1,2 --head masked,full --attn sdpa,eager --compile off,on \
    --json benchmarks/printouts/2026-12-07-pretrain-speed/rows.json > benchmarks/printouts/2026-12-07-pretrain-speed/table.txt
