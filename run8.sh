export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
pip install -q --no-index .whl/redis-*.whl --target /tmp/site 2>/dev/null
T0=$(date +%s)
# test_core sample, sm_90 then sm_80 (background)
( cd .peer && timeout 250 python run_sample.py --mode cuda --per-func 25 --workers 8 --tag cuda-n25 > $OUT/peer90.log 2>&1
  python summarize.py peer-results/cuda-n25.xml > $OUT/peer90.txt 2>&1; cp peer-results/cuda-n25.* $OUT/ 2>/dev/null
  echo "peer90 done $(( $(date +%s) - T0 ))s" >> $OUT/times.txt
  TILEC_CUDA_ARCH=80 timeout 200 python run_sample.py --mode cuda --per-func 25 --workers 8 --tag cuda80-n25 > $OUT/peer80.log 2>&1
  python summarize.py peer-results/cuda80-n25.xml > $OUT/peer80.txt 2>&1
  echo "peer80 done $(( $(date +%s) - T0 ))s" >> $OUT/times.txt ) &
timeout 330 python3 -m pytest -q -m gpu tests -n 6 -p no:cacheprovider > $OUT/gpu_suite.txt 2>&1
echo "suite rc=$? $(( $(date +%s) - T0 ))s" >> $OUT/times.txt
tail -15 $OUT/gpu_suite.txt
PYTHONPATH=$PWD:/tmp/site timeout 60 python3 -m pytest -q -m gpu tests/torch_ops -p no:cacheprovider > $OUT/torch_ops.txt 2>&1; tail -3 $OUT/torch_ops.txt
wait
cat $OUT/times.txt; head -30 $OUT/peer90.txt; head -30 $OUT/peer80.txt
