#!/usr/bin/env sh
# Makes sure the programs the test suite and the benchmarks drive for real are present: tmux (the agents' interactive
# clients in a terminal), Debian's chromium
# (dashboard tests in a headless browser), PostgreSQL (the server's storage tests start their own cluster) and GNU
# time (the benchmarks' peak memory). Installs them with
# apt-get when missing and allowed (root, or passwordless sudo); otherwise says what to install and fails.
set -eu

missing=""
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing="$missing chromium"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] || missing="$missing postgresql"
[ -x /usr/bin/time ] || missing="$missing time"
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"

[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"
else
  printf 'test-deps: the tests need%s; install them (Debian/Ubuntu: sudo apt-get install%s) and run again.\n' "$missing" "$missing" >&2
  exit 1
fi
command -v apt-get >/dev/null 2>&1 || { printf 'test-deps: the tests need%s; install them with your package manager.\n' "$missing" >&2; exit 1; }

printf 'test-deps: installing%s with apt-get…\n' "$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
