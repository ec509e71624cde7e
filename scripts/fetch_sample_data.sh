#!/usr/bin/env bash
# Fetches real numeric data files that ship with a PyPI package (matplotlib's sample data:
# an MRI slice, an EEG recording, a membrane potential trace, a float64 grid) into
# build/data/matplotlib/, for `hwzip eval --engine base-xor --trace ...`. Idempotent.
# Data stays outside the repository (license: matplotlib's, see the wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=build/data/matplotlib
if [ -f "$dest/membrane.dat" ]; then
  echo "sample data already in $dest"; exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --no-deps --only-binary=:all: -q -d "$tmp" "matplotlib==3.11.2" \
  || python3 -m pip download --no-deps --only-binary=:all: -q -d "$tmp" matplotlib
mkdir -p "$dest"
python3 - "$tmp" "$dest" <<'PY'
import glob, os, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
whl = glob.glob(os.path.join(tmp, "matplotlib-*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    for n in z.namelist():
        if "/sample_data/" in n and not n.endswith("/"):
            with open(os.path.join(dest, os.path.basename(n)), "wb") as f:
                f.write(z.read(n))
# .npz archives hold .npy arrays: unpack them (the DEM elevation grid, the bathymetry grid).
for npz in glob.glob(os.path.join(dest, "*.npz")):
    with zipfile.ZipFile(npz) as z:
        for n in z.namelist():
            base = os.path.basename(npz)[:-4] + "_" + os.path.basename(n)
            with open(os.path.join(dest, base), "wb") as f:
                f.write(z.read(n))
print("extracted", len(os.listdir(dest)), "files from", os.path.basename(whl), "to", dest)
PY
