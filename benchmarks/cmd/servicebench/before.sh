#!/bin/sh
# before.sh [REV] [OUT]: builds servicebench (this directory's source)
# against asyncbus as it was at REV (default bafa2b9, before issue 34),
# for `go run ./cmd/servicebench -before OUT`.
set -eu
rev=${1:-bafa2b9}
out=${2:-/tmp/servicebench-before}
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive "$rev" | tar -x -C "$tmp"
mkdir -p "$tmp/benchmarks/cmd/servicebench"
cp "$here"/*.go "$tmp/benchmarks/cmd/servicebench/"
rm -f "$tmp"/benchmarks/cmd/servicebench/*_test.go
if [ ! -d "$tmp/httplog" ]; then
	# REV predates the httplog package: serve without the +httplog back ends
	# (the server as it was before them; same protocol with this command).
	git -C "$root" show b076628:benchmarks/cmd/servicebench/server.go >"$tmp/benchmarks/cmd/servicebench/server.go"
fi
(cd "$tmp/benchmarks" && go build -o "$out" ./cmd/servicebench)
echo "$out"
