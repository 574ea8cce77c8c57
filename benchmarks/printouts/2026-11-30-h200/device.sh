#!/usr/bin/env bash
# One device call: the GPU checks never yet run on a GPU. `benchmarks/gpu.sh tests` (a GPU
# run resumes from its checkpoint: the fix of stop 54) and the smoke notebooks not run there
# before (06, 07, 10; 01-04 and 09 read all-MiniLM-L6-v2, larger than a call may carry).
# Needs .dev/whl (py3.12 wheels of papermill, jupytext, ipykernel, nbconvert, torch-dct and
# their needs that the image lacks) and .dev/data.tar.gz (PTB) carried; run from the root.
set -u
t0=$SECONDS
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .dev/whl/*.whl || exit 1
mkdir -p /tmp/data && tar xzf .dev/data.tar.gz -C /tmp/data || exit 1
export PYTHONPATH=/tmp/site:$PWD PRISMLIB_DATA=/tmp/data PYTHONUNBUFFERED=1 PYTHON=python3
log=$OUT/device.txt
{
  echo "== machine"; nvidia-smi -L; nproc; lscpu | grep -E 'Model name'
  python3 -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.cuda.is_available(), torch.backends.cudnn.version())"
  echo "setup $((SECONDS - t0)) s"
} >"$log" 2>&1
timeout 150 bash benchmarks/gpu.sh "$OUT/gpu" tests >/dev/null 2>&1; echo "tests rc $? at $((SECONDS - t0)) s" >>"$log"  # (the second call left it out)
SMOKE_ONLY="06 07 10" timeout 420 bash benchmarks/gpu.sh "$OUT/gpu" smoke >/dev/null 2>&1; echo "smoke rc $? at $((SECONDS - t0)) s" >>"$log"
echo "end $((SECONDS - t0)) s" >>"$log"
cat "$log"; tail -15 "$OUT/gpu/smoke.txt"
