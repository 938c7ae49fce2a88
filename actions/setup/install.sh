#!/usr/bin/env bash
# Makes sweepkit's binaries available on PATH for the rest of the job.
#
#   install.sh key              print the cache key of this source tree
#   install.sh install [TOOL…]  prebuilt archive (sha256-verified) when one is
#                               listed for this version and platform in
#                               checksums.txt, else build from the action's
#                               own source (cargo build --locked)
#   install.sh ensure TOOL      no-op when TOOL of this version is on PATH
#                               (the setup action ran); else install it
#
# Every sweepkit action calls `ensure`, so a workflow that runs
# actions/setup first builds once (and caches); one that doesn't still works.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
all_tools=(check-changelog generate-matrix collect-results compare-results success-rate visualizer-comment reuse-sweep)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n1)
bin_dir=${SWEEPKIT_BIN_DIR:-${RUNNER_TOOL_CACHE:-$HOME/.cache}/sweepkit/$version/bin}

log() { printf 'sweepkit-setup: %s\n' "$*" >&2; }

target_triple() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo x86_64-unknown-linux-gnu ;;
    Linux-aarch64) echo aarch64-unknown-linux-gnu ;;
    Darwin-arm64) echo aarch64-apple-darwin ;;
    Darwin-x86_64) echo x86_64-apple-darwin ;;
    *) echo unknown ;;
  esac
}

# The source identity: every file the build reads. Rebuilds only when one changes.
source_key() {
  (cd "$root" && find Cargo.toml Cargo.lock rust-toolchain.toml crates templates -type f \
     \( -name '*.rs' -o -name '*.toml' -o -name '*.lock' -o -name '*.j2' \) 2>/dev/null \
   | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
}

add_to_path() {
  if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$bin_dir" >>"$GITHUB_PATH"
  fi
  export PATH="$bin_dir:$PATH"
}

try_prebuilt() {
  local triple archive line url tmp
  triple=$(target_triple)
  archive="sweepkit-$version-$triple.tar.gz"
  line=$(grep -E "^[0-9a-f]{64}  $archive\$" "$here/checksums.txt" 2>/dev/null || true)
  [ -n "$line" ] || return 1
  url="${SWEEPKIT_RELEASE_BASE:-${GITHUB_SERVER_URL:-https://github.com}/${SWEEPKIT_REPOSITORY:-sweepkit/sweepkit}/releases/download}/v$version/$archive"
  tmp=$(mktemp -d)
  log "downloading $url"
  curl -fsSL --retry 3 -o "$tmp/$archive" "$url" || { rm -rf "$tmp"; return 1; }
  (cd "$tmp" && printf '%s\n' "$line" | sha256sum -c --status) || {
    log "sha256 mismatch for $archive: refusing it, building from source"; rm -rf "$tmp"; return 1; }
  mkdir -p "$bin_dir"
  tar -xzf "$tmp/$archive" -C "$bin_dir"
  rm -rf "$tmp"
  echo prebuilt
}

build_from_source() {
  local pkgs=() t
  for t in "$@"; do pkgs+=(-p "$t"); done
  log "building ${*} $version from $root"
  (cd "$root" && cargo build --release --locked "${pkgs[@]}" >&2) || { log "cargo build failed"; return 1; }
  mkdir -p "$bin_dir" || return 1
  for t in "$@"; do
    install -m 0755 "${CARGO_TARGET_DIR:-$root/target}/release/$t" "$bin_dir/$t" || return 1
  done
  source_key >"$bin_dir/.source-key" || return 1
  echo build
}

cmd=${1:-install}
shift || true
case "$cmd" in
  key)
    echo "sweepkit-$version-$(target_triple)-$(source_key)"
    ;;
  bin-dir)
    echo "$bin_dir"
    ;;
  install)
    tools=("$@")
    [ ${#tools[@]} -gt 0 ] || tools=("${all_tools[@]}")
    missing=()
    for t in "${tools[@]}"; do
      [ -x "$bin_dir/$t" ] || missing+=("$t")
    done
    if [ ${#missing[@]} -eq 0 ] && [ "$(cat "$bin_dir/.source-key" 2>/dev/null)" = "$(source_key)" ]; then
      how=cache
    else
      # Checked explicitly: errexit does not reach into $(…) or || lists.
      if ! how=$(try_prebuilt); then
        how=$(build_from_source "${tools[@]}") || exit 1
      fi
    fi
    add_to_path
    log "$how: ${tools[*]} in $bin_dir"
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
      { echo "bin-dir=$bin_dir"; echo "version=$version"; echo "source=$how"; } >>"$GITHUB_OUTPUT"
    fi
    ;;
  ensure)
    t=${1:?ensure needs a tool name}
    if [ -x "$bin_dir/$t" ]; then
      add_to_path
    else
      "$0" install "$t" >/dev/null
    fi
    ;;
  *)
    log "unknown command $cmd (key | bin-dir | install [TOOL…] | ensure TOOL)"; exit 2 ;;
esac
