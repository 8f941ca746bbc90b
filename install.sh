#!/usr/bin/env sh
# Sets up aiflare from this checkout: installs Bun (from npm) when missing, installs dependencies,
# builds the single executable and copies it to ${AIFLARE_INSTALL_DIR:-$HOME/.local/bin}/aiflare.
# Running it again rebuilds and replaces the binary; nothing else changes.
set -eu

BUN_VERSION="1.4.5"
here=$(cd "$(dirname "$0")" && pwd)
dest="${AIFLARE_INSTALL_DIR:-$HOME/.local/bin}"

say() { printf '%s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

command -v git >/dev/null 2>&1 || die "git is required; install it first."

if ! command -v bun >/dev/null 2>&1; then
  command -v npm >/dev/null 2>&1 || die "Bun is missing and npm is not available to install it. Install Node.js (with npm) or Bun, then run this again."
  say "Installing Bun ${BUN_VERSION} with npm…"
  if ! npm install --global --no-fund --no-audit "bun@${BUN_VERSION}" >/dev/null 2>&1; then
    # No write access to npm's global prefix: install into a private prefix instead.
    prefix="$HOME/.aiflare/bun"
    npm install --no-fund --no-audit --prefix "$prefix" "bun@${BUN_VERSION}" >/dev/null \
      || die "could not install Bun from npm (npm install bun@${BUN_VERSION} failed)."
    PATH="$prefix/node_modules/.bin:$PATH"
    export PATH
    say "Bun was installed in $prefix; add $prefix/node_modules/.bin to your PATH to run the tests."
  fi
  command -v bun >/dev/null 2>&1 || die "Bun was installed but is not on PATH; add npm's global bin directory ($(npm prefix -g)/bin) to PATH."
fi

cd "$here"
say "Installing dependencies…"
bun install --frozen-lockfile >/dev/null
say "Building dist/aiflare…"
bun run --silent build >/dev/null

mkdir -p "$dest"
# Copy then rename, so a running aiflare is never overwritten in place.
cp "$here/dist/aiflare" "$dest/.aiflare.tmp.$$"
chmod 755 "$dest/.aiflare.tmp.$$"
mv -f "$dest/.aiflare.tmp.$$" "$dest/aiflare"

say "Installed $("$dest/aiflare" --version | sed 's/^/aiflare /') at $dest/aiflare"
case ":$PATH:" in
  *":$dest:"*) ;;
  *) say "Add it to your PATH:  export PATH=\"$dest:\$PATH\"  (e.g. in ~/.profile or ~/.zshrc)" ;;
esac
say "Next: cd into a git repository and run  aiflare install"
