#!/usr/bin/env bash
# Builds everything run.sh needs as static binaries (CGO_ENABLED=0), so that
# a machine without a Go toolchain (the 16-core device) can run the
# comparison unchanged. Run it here, then carry benchmarks/device/bin to the
# device and run benchmarks/device/run.sh there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p device/bin
export CGO_ENABLED=0 GOOS=linux GOARCH="${GOARCH:-amd64}"
go build -trimpath -o device/bin/compare ./cmd/compare
# The bus and handler microbenchmarks, for -cpu scaling.
(cd .. && go test -c -trimpath -o benchmarks/device/bin/bus.test ./internal/bus)
go test -c -trimpath -o device/bin/benchmarks.test .
ls -l device/bin
