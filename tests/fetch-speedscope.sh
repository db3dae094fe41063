#!/usr/bin/env bash
# Fetches speedscope's npm package (its file-format JSON schema and the
# viewer itself) into a cache directory the format tests read, once: not at
# build time, not during the tests. Needs npm; the version is pinned so the
# schema the tests check against only changes on purpose.
set -euo pipefail
VERSION=${SPEEDSCOPE_VERSION:-1.25.0}
DEST=${PYBPFPROF_SPEEDSCOPE_CACHE:-/var/cache/pybpfprof/speedscope}
if [ -f "$DEST/package/package.json" ] &&
	grep -q "\"version\": \"$VERSION\"" "$DEST/package/package.json"; then
	exit 0
fi
command -v npm >/dev/null || { echo "fetch-speedscope: npm not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "speedscope@$VERSION" >/dev/null) ||
	{ echo "fetch-speedscope: npm pack speedscope@$VERSION failed" >&2; exit 1; }
mkdir -p "$DEST"
rm -rf "$DEST/package"
tar -xzf "$tmp/speedscope-$VERSION.tgz" -C "$DEST"
test -f "$DEST/package/dist/release/file-format-schema.json" ||
	{ echo "fetch-speedscope: no file-format-schema.json in speedscope@$VERSION" >&2; exit 1; }
