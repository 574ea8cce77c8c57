#!/usr/bin/env bash
# One device call: GPU checks (benchmarks/gpu.sh), then the measured training rate of
# cpu-long jobs on this machine's CPU (14 single-thread workers) and on its GPU (4 workers).
set -u
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .dev/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PRISMLIB_DATA=$PWD/.dev/data PYTHONUNBUFFERED=1 PYTHON=python3
log=$OUT/device.txt
{
  echo "== machine"; nvidia-smi -L; nproc; lscpu | grep -E 'Model name|^CPU\(s\)|Thread'
  python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available(), torch.backends.cudnn.version())"
  echo "setup $((SECONDS - t0)) s"
} >"$log" 2>&1
timeout 110 bash benchmarks/gpu.sh "$OUT/gpu" spectral >/dev/null 2>&1; echo "spectral rc $? at $((SECONDS - t0)) s" >>"$log"
timeout 70 bash benchmarks/gpu.sh "$OUT/gpu" lstm >/dev/null 2>&1; echo "lstm rc $? at $((SECONDS - t0)) s" >>"$log"
timeout 50 bash benchmarks/gpu.sh "$OUT/gpu" prism >/dev/null 2>&1; echo "prism rc $? at $((SECONDS - t0)) s" >>"$log"
SMOKE_ONLY="05 08" timeout 150 bash benchmarks/gpu.sh "$OUT/gpu" smoke >/dev/null 2>&1; echo "smoke rc $? at $((SECONDS - t0)) s" >>"$log"

rate() {  # label seconds device workers
  local label=$1 secs=$2 device=$3 workers=$4
  rm -rf .cache/jobs
  PRISMLIB_DEVICE=$device timeout -s INT "$secs" python3 -m prismlib train --profile cpu-long --workers "$workers" --executor local >>"$OUT/train.txt" 2>&1
  sleep 3; pkill -f "prismlib" ; sleep 1
  echo "== rate $label ($secs s): key tokens seconds tokens/s" >>"$log"
  for s in .cache/jobs/*/status.json; do
    [[ -f $s ]] || continue
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[2], d['tokens'], d['seconds'], round(d['tokens']/max(d['seconds'],1e-9)))" "$s" >>"$log"
  done
}
rate cpu14 90 cpu 14
rate cuda4 60 cuda 4
echo "end $((SECONDS - t0)) s" >>"$log"
cat "$log"
