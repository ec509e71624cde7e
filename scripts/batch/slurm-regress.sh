#!/usr/bin/env bash
# The long tier on a Slurm cluster: a job array of N shards, then one merge job that starts
# when every shard has ended well.
#
#   scripts/batch/slurm-regress.sh N OUT [hwzip regress options...]
#
# Run it from the repository on a login node after `cargo build --release` (OUT must be on a
# file system the compute nodes share). Each array task runs scripts/batch/shard.sh with its
# $SLURM_ARRAY_TASK_ID on 2 CPUs (`-j 2`, so leave -j out of the options); the merged report
# is OUT/merged/summary.md. Add sbatch options (partition, account, time) in $SBATCH_ARGS,
# e.g. SBATCH_ARGS="-p cpu -t 04:00:00". The options pass through `--wrap`: no spaces in them.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 N OUT [hwzip regress options...]" >&2
  exit 2
fi
n=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/logs"
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_ARGS:-} --array="1-$n" --cpus-per-task=2 \
  --job-name=hwzip-regress --output="$out/logs/shard-%a.log" \
  --wrap "\"$here/shard.sh\" regress \$SLURM_ARRAY_TASK_ID $n \"$out\" -j 2 $*")
# shellcheck disable=SC2086
sbatch --parsable ${SBATCH_ARGS:-} --dependency="afterok:$array" --job-name=hwzip-merge \
  --output="$out/logs/merge.log" --wrap "\"$here/merge.sh\" regress \"$out\""
echo "submitted: shards $array (1-$n), then the merge into $out/merged"
