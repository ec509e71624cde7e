#!/usr/bin/env bash
# One shard of a sharded `hwzip regress` or `hwzip sweep`, as a batch job runs it.
#
#   scripts/batch/shard.sh regress|sweep K N OUT [hwzip options...]
#
# Runs `hwzip <command> --shard K/N --out OUT/shard-K <options>`. The shards of one run share
# OUT (a network folder, or artifacts collected afterwards); scripts/batch/merge.sh joins
# them. $HWZIP names the binary (default: target/release/hwzip).
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 regress|sweep K N OUT [hwzip options...]" >&2
  exit 2
fi
cmd=$1 k=$2 n=$3 out=$4
shift 4
case "$cmd" in
  regress | sweep) ;;
  *) echo "$0: the command is regress or sweep, not \`$cmd\`" >&2; exit 2 ;;
esac
hwzip=${HWZIP:-target/release/hwzip}
mkdir -p "$out"
exec "$hwzip" "$cmd" --shard "$k/$n" --out "$out/shard-$k" "$@"
