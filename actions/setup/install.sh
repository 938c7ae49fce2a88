#!/usr/bin/env bash
# Makes sweepkit's binaries available on PATH for the rest of the job.
#
#   install.sh install [TOOL…]  download the release archive of this version
#                               for this platform, check its sha256 against
#                               checksums.txt (which ships beside this script,
#                               inside the pinned action ref), unpack it into
#                               a directory the job owns, put it on PATH
#   install.sh ensure TOOL      no-op when TOOL of this version is in the
#                               job's directory and first on PATH (the setup
#                               action ran); else `install TOOL`
#   install.sh bin-dir          print the directory `install` uses
#   install.sh target           print the target triple `install` looks for
#                               first on this host (scripts/release-archive
#                               names its archive after it by default)
#
# The release ships static musl archives (x86_64 and aarch64 Linux); on a
# glibc host, when checksums.txt lists no musl archive of this version for
# the host's architecture but lists the gnu one (a host build of
# scripts/release-archive --target <arch>-unknown-linux-gnu), that one is
# used instead, and the log says so.
#
# Nothing is ever compiled unless SWEEPKIT_BUILD_FROM_SOURCE=true (the setup
# action's `build-from-source: true`, for forks and development): then the
# tools are built from this action's own source with cargo instead.
#
# Environment: SWEEPKIT_TARGET overrides the target triple (no fallback
# then); SWEEPKIT_RELEASE_BASE the download base (default
# https://github.com/sweepkit/sweepkit/releases/download); SWEEPKIT_BIN_DIR
# the install directory (default $RUNNER_TEMP/sweepkit-<version>/bin, which
# the runner empties for every job, so a previous job cannot plant binaries
# there); SWEEPKIT_MAX_ARCHIVE_BYTES the download limit (tests lower it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
all_tools=(check-changelog generate-matrix collect-results compare-results success-rate visualizer-comment reuse-sweep sweep-ops sweepkit sweep-history)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n1)
# The release archives hold nine small static binaries (a few MB each);
# anything far larger is not one of ours, so the download stops there.
MAX_ARCHIVE_BYTES=${SWEEPKIT_MAX_ARCHIVE_BYTES:-$((200 * 1024 * 1024))}

log() { printf 'sweepkit-setup: %s\n' "$*" >&2; }
fail() {
  log "error: $*"
  if [ "${GITHUB_ACTIONS:-}" = true ]; then
    printf '::error title=sweepkit setup::%s\n' "$*"
  fi
  exit 1
}

[ -n "$version" ] || fail "no version in $root/Cargo.toml"
case "$MAX_ARCHIVE_BYTES" in
  '' | *[!0-9]*) fail "SWEEPKIT_MAX_ARCHIVE_BYTES must be a number of bytes, got '$MAX_ARCHIVE_BYTES'" ;;
esac

default_bin_dir() {
  if [ -n "${SWEEPKIT_BIN_DIR:-}" ]; then
    echo "$SWEEPKIT_BIN_DIR"
  elif [ -n "${RUNNER_TEMP:-}" ]; then
    echo "$RUNNER_TEMP/sweepkit-$version/bin"
  else
    echo "${TMPDIR:-/tmp}/sweepkit-$version-$(id -u)/bin"
  fi
}
bin_dir=$(default_bin_dir)

target_triple() {
  if [ -n "${SWEEPKIT_TARGET:-}" ]; then
    echo "$SWEEPKIT_TARGET"
    return
  fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo x86_64-unknown-linux-musl ;;
    Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-musl ;;
    *) echo "unsupported-$(uname -s)-$(uname -m)" ;;
  esac
}

# True on a glibc host (where a gnu build runs).
glibc_host() {
  getconf GNU_LIBC_VERSION >/dev/null 2>&1
}

# The checksums.txt line of $1 (an archive name), or nothing.
checksum_line() {
  grep -xE "[0-9a-f]{64}  ${1//./\\.}" "$here/checksums.txt" 2>/dev/null || true
}

add_to_path() {
  if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$bin_dir" >>"$GITHUB_PATH"
  fi
  export PATH="$bin_dir:$PATH"
}

# True when $1 runs and reports this version ("<tool> <version>").
version_ok() {
  local exe=$1 name=${1##*/} out
  out=$("$exe" --version 2>/dev/null) || return 1
  [ "$out" = "$name $version" ]
}

download_verified() {
  local triple archive line url base stage parent t gnu
  triple=$(target_triple)
  archive="sweepkit-$version-$triple.tar.gz"
  base=${SWEEPKIT_RELEASE_BASE:-${GITHUB_SERVER_URL:-https://github.com}/sweepkit/sweepkit/releases/download}
  url="$base/v$version/$archive"
  line=$(checksum_line "$archive")
  if [ -z "$line" ] && [ -z "${SWEEPKIT_TARGET:-}" ] && [ "${triple%-musl}" != "$triple" ] && glibc_host; then
    gnu="${triple%-musl}-gnu"
    line=$(checksum_line "sweepkit-$version-$gnu.tar.gz")
    if [ -n "$line" ]; then
      log "checksums.txt lists no $archive; this glibc host takes the $gnu archive it lists"
      triple=$gnu
      archive="sweepkit-$version-$triple.tar.gz"
      url="$base/v$version/$archive"
    fi
  fi
  [ -n "$line" ] || fail "no release archive of sweepkit $version for target $triple: $here/checksums.txt lists no sha256 for $archive (would download $url). Use a released version, or set build-from-source: true to build with cargo."
  parent=$(dirname "$bin_dir")
  mkdir -p "$parent"
  stage=$(mktemp -d "$parent/.download.XXXXXX")
  log "downloading $url"
  # The cap is enforced here, not by curl: --max-filesize only refuses a
  # response whose Content-Length is too large (curl 7.88, Debian 12's,
  # reads a chunked body without one in full). head stops reading one byte
  # past the limit, so at most MAX_ARCHIVE_BYTES+1 bytes are ever written;
  # curl then fails writing to the closed pipe (exit 23, or SIGPIPE), which
  # is the "too large" case below, never a success. A retry after part of
  # the body was written cannot rewind the pipe: the file is then wrong and
  # the checksum refuses it.
  local statuses size
  set +e
  curl -fsSL --retry 3 --max-filesize "$MAX_ARCHIVE_BYTES" "$url" 2>"$stage/curl.err" |
    head -c "$((MAX_ARCHIVE_BYTES + 1))" >"$stage/$archive"
  statuses=("${PIPESTATUS[@]}")
  set -e
  size=$(wc -c <"$stage/$archive" | tr -d ' ')
  if [ "$size" -gt "$MAX_ARCHIVE_BYTES" ] || [ "${statuses[0]}" = 63 ]; then
    # 63: curl's own refusal from a Content-Length over --max-filesize.
    rm -rf "$stage"
    fail "the download of $url is too large: more than $MAX_ARCHIVE_BYTES bytes (MAX_ARCHIVE_BYTES), stopped after $size bytes: refused"
  fi
  if [ "${statuses[0]}" != 0 ] || [ "${statuses[1]}" != 0 ]; then
    cat "$stage/curl.err" >&2
    rm -rf "$stage"
    fail "could not download sweepkit $version for target $triple from $url (curl exit ${statuses[0]}, head exit ${statuses[1]})"
  fi
  if ! (cd "$stage" && printf '%s\n' "$line" | sha256sum -c --status); then
    rm -rf "$stage"
    fail "sha256 of $archive from $url does not match $here/checksums.txt: refused"
  fi
  mkdir "$stage/bin"
  if ! tar --no-same-owner -xzf "$stage/$archive" -C "$stage/bin"; then
    rm -rf "$stage"
    fail "could not unpack $archive"
  fi
  for t in "$@"; do
    if [ ! -x "$stage/bin/$t" ]; then
      rm -rf "$stage"
      fail "$archive from $url has no executable $t"
    fi
  done
  # Only a complete, verified set is moved into place.
  mkdir -p "$bin_dir"
  mv -f "$stage/bin/"* "$bin_dir/"
  rm -rf "$stage"
  how=prebuilt
}

build_from_source() {
  local pkgs=() t
  command -v cargo >/dev/null || fail "build-from-source: cargo is not on PATH"
  for t in "$@"; do pkgs+=(-p "$t"); done
  log "building ${*} $version from $root (build-from-source)"
  (cd "$root" && cargo build --release --locked "${pkgs[@]}" >&2) || fail "cargo build of sweepkit $version failed"
  mkdir -p "$bin_dir"
  for t in "$@"; do
    install -m 0755 "${CARGO_TARGET_DIR:-$root/target}/release/$t" "$bin_dir/$t"
  done
  how=build
}

cmd=${1:-install}
shift || true
case "$cmd" in
  bin-dir)
    echo "$bin_dir"
    ;;
  target)
    target_triple
    ;;
  install)
    tools=("$@")
    [ ${#tools[@]} -gt 0 ] || tools=("${all_tools[@]}")
    for t in "${tools[@]}"; do
      case " ${all_tools[*]} " in
        *" $t "*) ;;
        *) fail "unknown tool $t (known: ${all_tools[*]})" ;;
      esac
    done
    how=
    if [ "${SWEEPKIT_BUILD_FROM_SOURCE:-false}" = true ]; then
      build_from_source "${tools[@]}"
    else
      download_verified "${tools[@]}"
    fi
    for t in "${tools[@]}"; do
      version_ok "$bin_dir/$t" || fail "$bin_dir/$t does not report version $version"
    done
    add_to_path
    log "$how: ${tools[*]} $version in $bin_dir"
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
      { echo "bin-dir=$bin_dir"; echo "version=$version"; echo "source=$how"; } >>"$GITHUB_OUTPUT"
    fi
    ;;
  ensure)
    t=${1:?ensure needs a tool name}
    # Only the job's own directory is trusted (a same-named tool elsewhere
    # on a persistent runner's PATH may have been planted by an earlier job).
    if version_ok "$bin_dir/$t"; then
      if [ "$(command -v "$t" || true)" != "$bin_dir/$t" ]; then add_to_path; fi
    else
      "$0" install "$t" >/dev/null
    fi
    ;;
  *)
    log "unknown command $cmd (install [TOOL…] | ensure TOOL | bin-dir | target)"
    exit 2
    ;;
esac
