#!/bin/bash
# One round of encoder training on a lent GPU for a fixed number of minutes (training/README.md,
# "Reproducing the shipped models"). Run from the repository root with the packed data dir in $DATA:
#   DATA=gpu-data BUDGET=390 OUT=/tmp/out bash training/gpu_round.sh
# Two runs share the GPU (each is bounded by Python and kernel launches, not by the card):
#   small: configs/mav-encoder-small-gpu.json (d256 L8) from scratch;
#   tiny:  configs/mav-encoder-tiny-gpu-continue.json, the shipped mav-enc-tiny trained on.
# Each fits its steps to BUDGET seconds (--time-budget), is exported with the ONNX Runtime check, and both
# packages with their logs end up in $OUT/round.tar, split into 15 MB parts (round.tar.part-*).
# BATCH overrides the batch size of both (a CPU rehearsal of this script uses a small one).
set -u
DATA=$(realpath "${DATA:?the packed data dir}")
OUT=$(realpath "${OUT:?the folder for the results}")
BUDGET=${BUDGET:-390}
ROOT=$(pwd)
WORK=${WORK:-$ROOT/training/runs/gpu-round}
mkdir -p "$WORK"
export PYTHONUNBUFFERED=1
extra=()
[ -n "${BATCH:-}" ] && extra=(--batch-size "$BATCH")
cd "$ROOT/training" || exit 1
(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || echo "no GPU") | tee "$WORK/machine.txt"
python3 -c "import torch, numpy, onnx, onnxruntime; print('torch', torch.__version__, 'numpy', numpy.__version__, 'onnx', onnx.__version__, 'onnxruntime', onnxruntime.__version__)" | tee -a "$WORK/machine.txt"
python3 -m mavtrain.train --config configs/mav-encoder-small-gpu.json --data "$DATA" --run "$WORK/small" \
    --time-budget "$BUDGET" "${extra[@]}" > "$WORK/small.log" 2>&1 &
python3 -m mavtrain.train --config configs/mav-encoder-tiny-gpu-continue.json --data "$DATA" --run "$WORK/tiny" \
    --init-from "$ROOT/assets/models/mav-enc-tiny" --time-budget "$BUDGET" "${extra[@]}" > "$WORK/tiny.log" 2>&1 &
while [ -n "$(jobs -r)" ]; do
    sleep 30
    for r in small tiny; do echo "$r: $(grep -E '^step=' "$WORK/$r.log" | tail -1)"; done
done
wait
for r in small tiny; do
    tail -3 "$WORK/$r.log"
    name=mav-enc-$r
    python3 -m mavtrain.export --run "$WORK/$r" --out "$WORK/pkg-$r" --name "$name" --data "$DATA" > "$WORK/export-$r.log" 2>&1 &
done
wait
tail -n 2 "$WORK"/export-*.log
for r in small tiny; do
    # an export that failed still sends the EMA weights home (weights.pt: the checkpoint without the live weights and
    # the optimiser state; export it there as the run's checkpoint.pt)
    [ -f "$WORK/pkg-$r/model.onnx" ] || python3 -c "import sys, torch; ck = torch.load(sys.argv[1], weights_only=False); ck.pop('optimizer', None); ck.pop('model', None); torch.save(ck, sys.argv[2])" "$WORK/$r/checkpoint.pt" "$WORK/$r/weights.pt"
done
cd "$WORK" || exit 1
tar -cf "$OUT/round.tar" --exclude=checkpoint.pt machine.txt ./*.log small tiny pkg-small pkg-tiny 2>&1 | grep -v "No such file"
split -b 15M -d "$OUT/round.tar" "$OUT/round.tar.part-" && rm "$OUT/round.tar"
ls -la "$OUT"
