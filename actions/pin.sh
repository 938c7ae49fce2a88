#!/usr/bin/env bash
# Version coherence of the reusable workflow, its actions and the binaries.
# Every `sweepkit/sweepkit/actions/<tool>@<sha> # v<version>` in
# .github/workflows/run-sweep.yml, the leg workflow it calls
# (sweepkit-sweep-legs.yml), the history workflow (sweepkit-history.yml) and in the callers' examples
# (examples/*.yml) names one commit P, and the actions at P download the
# binaries of P's crates, so:
#
#   actions/pin.sh check   exit 1 unless
#                          - every ref names the same commit P, an ancestor
#                            of HEAD, with the comment `# v<version of
#                            Cargo.toml>`;
#                          - crates/, templates/, Cargo.toml and Cargo.lock
#                            are unchanged from P to HEAD (the binaries P
#                            downloads are built from the code of HEAD);
#                          - actions/setup/checksums.txt is unchanged from
#                            P to HEAD (`sweepkit workflow write` embeds
#                            HEAD's as the checksums at its pin P);
#                          - when actions/setup/checksums.txt at P lists
#                            archives of this version, the tag v<version>
#                            has the same crates as P (skipped, with a
#                            warning, when the tag is not in this clone).
#                          Exit 2 when P is not in this clone (shallow?).
#   actions/pin.sh <sha>   rewrite every ref to <sha> and the comment to the
#                          current version (then commit the pin)
set -euo pipefail
cd "$(dirname "$0")/.."
wf=.github/workflows/run-sweep.yml
shopt -s nullglob
files=("$wf" .github/workflows/sweepkit-sweep-legs.yml .github/workflows/sweepkit-history.yml examples/*.yml)
pattern='sweepkit/sweepkit/actions/[a-z-]+@[0-9a-f]{40}( # v[^ ]+)?'
code=(crates templates Cargo.toml Cargo.lock)
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)

fail() { echo "pins: $*" >&2; exit 1; }

case "${1:-check}" in
  check)
    mapfile -t refs < <(grep -ohE "$pattern" "${files[@]}")
    [ "${#refs[@]}" -gt 0 ] || fail "$wf references none of this repository's actions"
    mapfile -t shas < <(printf '%s\n' "${refs[@]}" | sed -E 's/.*@([0-9a-f]{40}).*/\1/' | sort -u)
    if [ "${#shas[@]}" -ne 1 ]; then
      fail "$wf and examples/ reference ${#shas[@]} different commits of this repository's actions (${shas[*]}); run actions/pin.sh <sha>"
    fi
    sha=${shas[0]}
    mapfile -t comments < <(printf '%s\n' "${refs[@]}" | sed -nE 's/.* # v([^ ]+)$/\1/p' | sort -u)
    if [ "${#comments[@]}" -ne 1 ] || [ "${comments[0]}" != "$version" ] ||
       [ "$(printf '%s\n' "${refs[@]}" | grep -cv ' # v')" -ne 0 ]; then
      fail "every action ref must end in '# v$version' (the version in Cargo.toml); found ${comments[*]:-none}; run actions/pin.sh $sha"
    fi
    if ! git rev-parse -q --verify "$sha^{commit}" >/dev/null; then
      echo "pins: $sha is not in this clone (shallow?); fetch the history (fetch-depth: 0) to check it" >&2
      exit 2
    fi
    git merge-base --is-ancestor "$sha" HEAD || fail "$sha is not an ancestor of HEAD"
    if ! git diff --quiet "$sha" HEAD -- "${code[@]}"; then
      git diff --stat "$sha" HEAD -- "${code[@]}" | tail -n 5 >&2
      fail "crates changed after the pinned ref $sha; re-pin (actions/pin.sh <sha of the last commit that changed them>)"
    fi
    if ! git diff --quiet "$sha" HEAD -- actions/setup/checksums.txt; then
      fail "actions/setup/checksums.txt changed after the pinned ref $sha: the setup action at $sha still checks against the old list; pin at the commit that changed it (actions/pin.sh <its sha>)"
    fi
    if ! git diff --quiet "$sha" HEAD -- actions/ ':!actions/pin.sh'; then
      echo "pins: warning: actions/ changed after the pinned commit $sha; the workflow runs the actions as they are at $sha until the next pin" >&2
    fi
    if git show "$sha:actions/setup/checksums.txt" 2>/dev/null | grep -qE "^[0-9a-f]{64}  sweepkit-$version-"; then
      tag=v$version
      if git rev-parse -q --verify "refs/tags/$tag^{commit}" >/dev/null; then
        git diff --quiet "$tag" "$sha" -- "${code[@]}" ||
          fail "checksums.txt at $sha lists the $tag archives, but the code at $sha differs from the tag's: those archives were not built from it; bump the version"
      else
        echo "pins: warning: checksums.txt at $sha lists $tag archives, but tag $tag is not in this clone; tag not compared" >&2
      fi
    fi
    echo "pins: every action ref names $sha (v$version), and the code is unchanged since"
    ;;
  *)
    sha=$1
    [[ "$sha" =~ ^[0-9a-f]{40}$ ]] || { echo "usage: actions/pin.sh check | <40-hex sha>" >&2; exit 2; }
    sed -E -i "s#(sweepkit/sweepkit/actions/[a-z-]+)@[0-9a-f]{40}( \# v[^ ]+)?#\1@$sha \# v$version#g" "${files[@]}"
    echo "pinned $(cat "${files[@]}" | grep -cE "$pattern") refs in $wf and examples/ to $sha (v$version)"
    ;;
esac
