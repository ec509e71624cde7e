#!/usr/bin/env bash
# Joins the shards that scripts/batch/shard.sh wrote into OUT/shard-1 ... OUT/shard-N:
#
#   scripts/batch/merge.sh regress|sweep OUT
#
# writes OUT/merged, the report the unsharded run writes (hwzip refuses a missing or repeated
# shard, or a folder of another run). $HWZIP names the binary (default: target/release/hwzip).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 regress|sweep OUT" >&2
  exit 2
fi
cmd=$1 out=$2
case "$cmd" in
  regress | sweep) ;;
  *) echo "$0: the command is regress or sweep, not \`$cmd\`" >&2; exit 2 ;;
esac
hwzip=${HWZIP:-target/release/hwzip}
shopt -s nullglob
shards=("$out"/shard-*)
if [ ${#shards[@]} -eq 0 ]; then
  echo "$0: no $out/shard-* folder to merge" >&2
  exit 2
fi
exec "$hwzip" "$cmd" --merge "${shards[@]}" --out "$out/merged"
