#!/usr/bin/env bash
# publish-charts: push the PNG charts of one run to a branch, in the folder
# <run id>-<attempt>, and print `base-url=<url of that folder at the commit>`
# to $GITHUB_OUTPUT. Environment: CHARTS_DIR, CHARTS_BRANCH, CHARTS_TOKEN,
# CHARTS_DEFAULT_BRANCH (the repository's default branch, from the event),
# GITHUB_REPOSITORY, GITHUB_SERVER_URL, GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT,
# GITHUB_EVENT_PATH; CHARTS_REMOTE overrides the remote (the test's local
# repository).
# Never the default branch or a name that looks protected (main, master,
# trunk, develop, release*): the job holds `contents: write`, and the push
# replaces a folder there. The run id and attempt must be positive integers:
# they name the folder that is removed and re-added.
# Exit 0 pushed or nothing to push, 2 refused or could not push.
set -euo pipefail

fail() { echo "::error::publish-charts: $*" >&2; exit 2; }

# Concurrent runs push to the same branch: fetch, add, push, again on a
# rejected push, this many times.
MAX_ATTEMPTS=3

: "${CHARTS_DIR:?}" "${CHARTS_BRANCH:?}" "${GITHUB_REPOSITORY:?}" "${GITHUB_RUN_ID:?}"
server=${GITHUB_SERVER_URL:-https://github.com}
git check-ref-format --branch "$CHARTS_BRANCH" >/dev/null 2>&1 ||
  fail "branch '$CHARTS_BRANCH' is not a valid branch name"
# Every default_branch the event names (the repository's; on a pull
# request also its head and base repositories'), and the one passed in.
defaults=()
[ -z "${CHARTS_DEFAULT_BRANCH:-}" ] || defaults+=("$CHARTS_DEFAULT_BRANCH")
if [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ]; then
  mapfile -t -O "${#defaults[@]}" defaults < <(
    grep -o '"default_branch"[[:space:]]*:[[:space:]]*"[^"]*"' "$GITHUB_EVENT_PATH" |
      sed 's/.*:[[:space:]]*"\(.*\)"$/\1/' | LC_ALL=C sort -u)
fi
for d in "${defaults[@]}"; do
  [ "$CHARTS_BRANCH" != "$d" ] ||
    fail "branch '$CHARTS_BRANCH' is the repository's default branch: give the charts a branch of their own"
done
lower=${CHARTS_BRANCH,,}
case "$lower" in
  main | master | trunk | develop | development | production | release | release[-/_]* | releases/* | stable | head)
    fail "branch '$CHARTS_BRANCH' looks protected (a default or release branch): give the charts a branch of their own" ;;
esac
positive='^[1-9][0-9]{0,18}$'
[[ $GITHUB_RUN_ID =~ $positive ]] || fail "GITHUB_RUN_ID '$GITHUB_RUN_ID' is not a positive integer"
attempt_no=${GITHUB_RUN_ATTEMPT:-1}
[[ $attempt_no =~ $positive ]] || fail "GITHUB_RUN_ATTEMPT '$attempt_no' is not a positive integer"
folder="$GITHUB_RUN_ID-$attempt_no"

manifest="$CHARTS_DIR/charts.json"
if [ ! -f "$manifest" ]; then
  echo "publish-charts: no $manifest (no charts drawn): nothing to push"
  echo "base-url=" >>"${GITHUB_OUTPUT:-/dev/null}"
  exit 0
fi
mapfile -t files < <(find "$CHARTS_DIR" -maxdepth 1 -type f -name '*.png' -printf '%f\n' | LC_ALL=C sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "publish-charts: no PNG in $CHARTS_DIR: nothing to push"
  echo "base-url=" >>"${GITHUB_OUTPUT:-/dev/null}"
  exit 0
fi
for f in "${files[@]}"; do
  # compare-results names them NN-<slug>.png; anything else is not ours.
  [[ $f =~ ^[A-Za-z0-9._-]+\.png$ ]] || fail "unexpected file name '$f' in $CHARTS_DIR"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g() { git -C "$work" "$@"; }
g init -q
g config user.name "github-actions[bot]"
g config user.email "41898282+github-actions[bot]@users.noreply.github.com"
if [ -n "${CHARTS_TOKEN:-}" ]; then
  # As actions/checkout does: a header in this clone's config, never the URL.
  basic=$(printf 'x-access-token:%s' "$CHARTS_TOKEN" | base64 -w0)
  echo "::add-mask::$basic"
  g config "http.$server/.extraheader" "AUTHORIZATION: basic $basic"
fi
g remote add origin "${CHARTS_REMOTE:-$server/$GITHUB_REPOSITORY.git}"

for attempt in $(seq "$MAX_ATTEMPTS"); do
  heads=$(g ls-remote --heads origin "refs/heads/$CHARTS_BRANCH") ||
    fail "cannot read $GITHUB_REPOSITORY (does the token have contents: write?)"
  if [ -n "$heads" ]; then
    g fetch -q --depth 1 origin "refs/heads/$CHARTS_BRANCH" || fail "cannot fetch $CHARTS_BRANCH"
    g checkout -q --detach FETCH_HEAD
  else
    echo "publish-charts: creating branch $CHARTS_BRANCH"
    g checkout -q --orphan "publish-charts-new-$attempt"
  fi
  rm -rf "${work:?}/$folder"
  mkdir -p "$work/$folder"
  cp "$manifest" "$work/$folder/"
  for f in "${files[@]}"; do cp "$CHARTS_DIR/$f" "$work/$folder/"; done
  g add "$folder"
  g commit -q -m "charts of run $GITHUB_RUN_ID (attempt $attempt_no)"
  if g push -q origin "HEAD:refs/heads/$CHARTS_BRANCH"; then
    sha=$(g rev-parse HEAD)
    url="$server/$GITHUB_REPOSITORY/raw/$sha/$folder/"
    echo "publish-charts: ${#files[@]} chart(s) in $CHARTS_BRANCH/$folder at $sha"
    echo "base-url=$url" >>"${GITHUB_OUTPUT:-/dev/null}"
    exit 0
  fi
  echo "publish-charts: push rejected (attempt $attempt of $MAX_ATTEMPTS); fetching again"
done
fail "could not push to $CHARTS_BRANCH after $MAX_ATTEMPTS attempts"
