export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/tc
T0=$(date +%s); t() { echo "== $1 $(( $(date +%s) - T0 ))s"; }
nvidia-smi -L
timeout 60 python3 .peer/diag_stream2.py 2>&1 | tail -6; t diag
timeout 60 python3 -m pytest -q -n 0 -rxXs -p no:cacheprovider tests/gpu/test_launch_devices.py -k current_stream 2>&1 | tail -5; t streamtest
timeout 300 python3 -m pytest -q -m gpu tests -n 8 -p no:cacheprovider > $OUT/gpu_suite.txt 2>&1; t suite
tail -2 $OUT/gpu_suite.txt | cut -c1-300; grep FAILED $OUT/gpu_suite.txt | head -20
timeout 150 python3 benchmarks/gpu_spellings.py --only "fp16 A@B" --only "fp16 trans(A)@B" --only "fp16 bias+leaky" --only "fp16 x@W.T" 2>&1 | tail -8; t bench
