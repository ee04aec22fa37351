#!/bin/sh
# Builds the seed corpora of the fuzz targets from the repository's fixtures (run from fuzz/).
# seeds/bundle_reader: the bundle fixtures, whole. seeds/ncu_csv: the header and first launches
# of each one-metric DeepCAM capture, three captures of one run joined with form feeds (as the
# target splits its input), and a raw-page table in the shape `ncu --page raw` writes.
set -eu
fixtures=../tests/fixtures
rm -rf seeds && mkdir -p seeds/bundle_reader seeds/ncu_csv
cp "$fixtures"/bundles/*.json seeds/bundle_reader/
head_of() { sed -n '/^"ID"/,+4p' "$1"; }
for f in "$fixtures"/ncu/nersc-v100-deepcam/*.csv; do
  head_of "$f" > "seeds/ncu_csv/$(basename "$f")"
done
d="$fixtures/ncu/nersc-v100-deepcam"
{
  head_of "$d/out.dram__bytes.sum.csv"; printf '\f'
  head_of "$d/out.sm__cycles_elapsed.avg.csv"; printf '\f'
  head_of "$d/out.sm__cycles_elapsed.avg.per_second.csv"
} > seeds/ncu_csv/joined-three.csv
cat > seeds/ncu_csv/raw-page.csv <<'CSV'
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes.sum","gpu__time_duration.sum","sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
"","","","","","","","","","","","byte","nsecond","inst"
"0","1","python","h","void gemm<float>(float*)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","1000000","20000","500000000"
"1","1","python","h","void gemm<float>(float*)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","1,000,000","22","500000000"
CSV
