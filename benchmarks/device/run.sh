#!/usr/bin/env bash
# Runs the side-by-side comparison at 1, 4, 16 and 64 goroutines, and the
# bus microbenchmarks at -cpu 1,4,16, from the static binaries build.sh made.
# Needs no Go toolchain. Results go to $OUT (or ./device-results): the
# comparison's results.md/json/chart.svg, the go-test benchmark output, and
# machine.txt naming the machine.
#
#	bash benchmarks/device/run.sh            # defaults: 300000 records, 3 repeats
#	N=100000 REPEAT=1 bash benchmarks/device/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$PWD/device-results}"
mkdir -p "$out"
{
	echo "date: $(date -u +%FT%TZ)"
	echo "nproc: $(nproc)"
	grep -m1 'model name' /proc/cpuinfo || true
	uname -a
	cat /proc/loadavg
} >"$out/machine.txt"
cat "$out/machine.txt"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$here/bin/compare" -n "${N:-300000}" -repeat "${REPEAT:-3}" -goroutines "${GOROUTINES:-1,4,16,64}" \
	-out "$out/compare" | tee "$out/compare.txt"
if [ -x "$here/bin/bus.test" ]; then
	"$here/bin/bus.test" -test.run '^$' -test.bench "${BUS_BENCH:-Enqueue}" -test.cpu 1,4,16 \
		-test.benchtime "${BENCHTIME:-1s}" -test.count "${COUNT:-3}" | tee "$out/bus-bench.txt"
fi
"$here/bin/benchmarks.test" -test.run '^$' -test.bench 'LoggerFile|Handle$' -test.cpu 1,4,16 \
	-test.benchtime "${BENCHTIME:-1s}" -test.count "${COUNT:-3}" | tee "$out/handler-bench.txt"
