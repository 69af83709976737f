#!/usr/bin/env bash
# Set-up (packages, configure, build), then the tinyddp demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2   # set-up output on stderr, the demo on stdout
exec "${BUILD_DIR:-build}/apps/tinyddp" demo "$@"
