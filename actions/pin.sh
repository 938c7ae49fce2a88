#!/usr/bin/env bash
# Keeps the reusable workflow's references to this repository's actions in
# step: every `sweepkit/sweepkit/actions/<tool>@<sha> # v<version>` in
# .github/workflows/run-sweep.yml names the same commit.
#
#   actions/pin.sh check       all refs agree and name an ancestor of HEAD
#                              (exit 1 otherwise); warns when actions/
#                              changed after the pinned commit
#   actions/pin.sh <sha>       rewrite every ref to <sha> (release step: tag,
#                              pin to the tag's commit, commit the pin)
set -euo pipefail
cd "$(dirname "$0")/.."
wf=.github/workflows/run-sweep.yml
pattern='sweepkit/sweepkit/actions/[a-z-]+@[0-9a-f]{40}'
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)

case "${1:-check}" in
  check)
    mapfile -t shas < <(grep -oE "$pattern" "$wf" | sed 's/.*@//' | sort -u)
    if [ "${#shas[@]}" -ne 1 ]; then
      echo "pins: $wf references ${#shas[@]} different commits of this repository's actions (${shas[*]:-none}); run actions/pin.sh <sha>" >&2
      exit 1
    fi
    sha=${shas[0]}
    if git rev-parse -q --verify "$sha^{commit}" >/dev/null; then
      if ! git merge-base --is-ancestor "$sha" HEAD; then
        echo "pins: $sha is not an ancestor of HEAD" >&2
        exit 1
      fi
      if ! git diff --quiet "$sha" HEAD -- actions/ ':!actions/pin.sh'; then
        echo "pins: warning: actions/ changed after the pinned commit $sha; re-pin at the next release" >&2
      fi
    else
      echo "pins: warning: $sha is not in this clone (shallow?); agreement checked only" >&2
    fi
    echo "pins: every action ref names $sha"
    # The example caller pins the workflow itself; say when it lags.
    wf_sha=$(grep -oE 'run-sweep\.yml@[0-9a-f]{40}' examples/run-sweep.yml | head -n1 | sed 's/.*@//')
    if [ -n "$wf_sha" ] && git rev-parse -q --verify "$wf_sha^{commit}" >/dev/null &&
       ! git diff --quiet "$wf_sha" HEAD -- "$wf"; then
      echo "pins: warning: $wf changed after $wf_sha, the commit examples/run-sweep.yml calls" >&2
    fi
    ;;
  *)
    sha=$1
    [[ "$sha" =~ ^[0-9a-f]{40}$ ]] || { echo "usage: actions/pin.sh check | <40-hex sha>" >&2; exit 2; }
    sed -E -i "s#(sweepkit/sweepkit/actions/[a-z-]+)@[0-9a-f]{40}( \# v[0-9.]+)?#\1@$sha \# v$version#g" "$wf"
    echo "pinned $(grep -cE "$pattern" "$wf") refs in $wf to $sha (v$version)"
    ;;
esac
