#!/bin/sh
# aiflare-git-hook: {{hook}}
# Installed by `aiflare install`; `aiflare uninstall` removes it and puts back any hook it replaced.
# A hook that was here before is kept as "{{hook}}.aiflare-chained" next to this file. It runs first,
# with the same arguments and input, and a failure of it stops here with its exit status.
# aiflare runs second. For pre-push, only aiflare's deliberate refusal (exit 1) blocks the push;
# any other aiflare failure lets git go on.
AIFLARE_BIN={{aiflare}}
hook_name='{{hook}}'
chained="$0.aiflare-chained"

input=
if input=$(mktemp "${TMPDIR:-/tmp}/aiflare-hook.XXXXXX" 2>/dev/null); then
  trap 'rm -f "$input"' EXIT
  trap 'exit 129' HUP
  trap 'exit 130' INT
  trap 'exit 143' TERM
  cat >"$input"
else
  input=
fi

# Runs the chained hook so that it sees its own name in $0 (husky's stubs find their script that way).
run_chained() {
  first=$(head -n 1 "$chained" 2>/dev/null)
  case "$first" in
    '#!/bin/sh' | '#!/usr/bin/env sh' | '#!/bin/dash' | '#!/usr/bin/env dash') shell=sh ;;
    '#!/bin/bash' | '#!/usr/bin/bash' | '#!/usr/bin/env bash') shell=bash ;;
    *) shell= ;;
  esac
  if [ -n "$shell" ]; then
    AIFLARE_CHAINED_HOOK="$chained" "$shell" -c '. "$AIFLARE_CHAINED_HOOK"' "$0" "$@"
  else
    "$chained" "$@"
  fi
}

if [ -f "$chained" ] && [ -x "$chained" ]; then
  if [ -n "$input" ]; then
    run_chained "$@" <"$input"
  else
    run_chained "$@"
  fi
  status=$?
  [ "$status" -eq 0 ] || exit "$status"
fi

if [ ! -x "$AIFLARE_BIN" ]; then
  echo "aiflare: $AIFLARE_BIN not found; run 'aiflare install' again or 'aiflare uninstall'" >&2
  exit 0
fi
if [ -n "$input" ]; then
  "$AIFLARE_BIN" hook "$hook_name" "$@" <"$input"
else
  "$AIFLARE_BIN" hook "$hook_name" "$@" </dev/null
fi
rc=$?
if [ "$hook_name" = pre-push ] && [ "$rc" -eq 1 ]; then
  exit 1
fi
exit 0
