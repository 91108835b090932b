#!/bin/bash
# One round of mav-lm training on a lent GPU for a fixed number of seconds (training/README.md, "The text
# model on a lent GPU"). Run from the repository root with the packed text data in $DATA
# (`python -m mavtrain.pack --lm`):
#   DATA=gpu-lm-data BUDGET=420 OUT=/tmp/out bash training/gpu_round_lm.sh
# One run: $CONFIG (default configs/mav-lm-tiny-llama-gpu.json, the shipped mav-tiny's shape in the Llama
# block with a 4,096-token context and the paper's 60 / 40 MAV / trace batches) from scratch, its steps fitted
# to BUDGET seconds (--time-budget), exported as the package mav-tiny through the Llama graph with the ONNX
# Runtime check. The package, the run's log and summary end up in $OUT/round.tar, split into 15 MB parts
# (round.tar.part-*), also when the training or the export failed (the script then exits with 1). BATCH
# overrides the batch size (a CPU rehearsal of this script uses a small one); POLL is the progress interval.
set -u
DATA=$(realpath "${DATA:?the packed data dir}")
OUT=$(realpath "${OUT:?the folder for the results}")
BUDGET=${BUDGET:-420}
CONFIG=${CONFIG:-configs/mav-lm-tiny-llama-gpu.json}
ROOT=$(pwd)
WORK=${WORK:-$ROOT/training/runs/gpu-round-lm}
mkdir -p "$WORK" "$OUT"
export PYTHONUNBUFFERED=1
extra=()
[ -n "${BATCH:-}" ] && extra=(--batch-size "$BATCH")
cd "$ROOT/training" || exit 1
(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || echo "no GPU") | tee "$WORK/machine.txt"
python3 -c "import torch, numpy, onnx, onnxruntime, tokenizers; print('torch', torch.__version__, 'numpy', numpy.__version__, 'onnx', onnx.__version__, 'onnxruntime', onnxruntime.__version__, 'tokenizers', tokenizers.__version__)" | tee -a "$WORK/machine.txt" || exit 1
start=$(date +%s)
python3 -m mavtrain.train --config "$CONFIG" --data "$DATA" --run "$WORK/lm" --time-budget "$BUDGET" "${extra[@]}" \
    > "$WORK/lm.log" 2>&1 &
train_pid=$!
while kill -0 "$train_pid" 2>/dev/null; do
    sleep "${POLL:-30}"
    echo "lm: $(grep -E '^step=' "$WORK/lm.log" | tail -1)"
done
wait "$train_pid"
trained=$?
echo "training: $(( $(date +%s) - start )) s, exit status $trained"
tail -3 "$WORK/lm.log"
python3 -m mavtrain.export --run "$WORK/lm" --out "$WORK/pkg-lm" --name mav-tiny --data "$DATA" > "$WORK/export-lm.log" 2>&1
exported=$?
tail -n 3 "$WORK/export-lm.log"
# an export that failed still sends the EMA weights home (weights.pt: the checkpoint without the live weights
# and the optimiser state; export it there as the run's checkpoint.pt)
[ -f "$WORK/pkg-lm/model.onnx" ] || python3 -c "import sys, torch; ck = torch.load(sys.argv[1], weights_only=False); ck.pop('optimizer', None); ck.pop('model', None); torch.save(ck, sys.argv[2])" "$WORK/lm/checkpoint.pt" "$WORK/lm/weights.pt"
cd "$WORK" || exit 1
tar -cf "$OUT/round.tar" --exclude=checkpoint.pt machine.txt ./*.log lm pkg-lm 2>&1 | grep -v "No such file"
split -b 15M -d "$OUT/round.tar" "$OUT/round.tar.part-" && rm "$OUT/round.tar"
ls -la "$OUT"
[ "$trained" -eq 0 ] && [ "$exported" -eq 0 ] || { echo "the training or the export failed: see the logs in round.tar"; exit 1; }
