#!/usr/bin/env bash
# publish-example.sh: rebuilds both published versions of the example plugin mod_example from its source and
# publishes them, signed with the example publisher's key (service-examples, keys/), into plugins-registry/:
# index.json, mod_example/mod_example-1.0.0.tgz and mod_example/mod_example-2.0.0.tgz.
#
#   plugins-registry/tools/publish-example.sh [--registry <dir>] [<version>...]
#
# Without arguments: both versions into plugins-registry/. --registry publishes into another registry
# directory (created if need be), and naming versions (1.0.0, 2.0.0) publishes only those: docs/plugins.md
# uses `--registry /srv/plugins 1.0.0`, then `--registry /srv/plugins 2.0.0`, to walk through an upgrade.
#
# 2.0.0 is the source as it stands (src/mod_example). 1.0.0 is built in a temporary copy of it with
# history/1.0.0/echo.ts in place of src/echo.ts and the version set to 1.0.0 (package.json and the
# definition): the only differences between the two. The outputs are reproducible: tarballs are
# deterministic and republishing an identical build leaves index.json as it was, so running this again on
# an unchanged source changes no byte (a changed build of a published version is refused: publish a new one).
#
# Needs Node 20 and the built plugin API (npx tsc -b kernel/plugin-api at the repository root, done here).
# TypeScript and @service/plugin-api come from src/mod_example/node_modules when it was installed there
# (npm install), else from the repository's node_modules, which Node and tsc find by walking up.
set -euo pipefail

tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
registry="$(dirname "$tools")"
repo="$(dirname "$registry")"
plugin="$registry/src/mod_example"
key="$registry/keys/service-examples.pem"
publisher=service-examples

target="$registry"
versions=()
while [ $# -gt 0 ]; do
  case "$1" in
    --registry) [ $# -ge 2 ] || { echo "--registry needs a directory" >&2; exit 2; }; mkdir -p "$2"; target="$(cd "$2" && pwd)"; shift 2 ;;
    1.0.0|2.0.0) versions+=("$1"); shift ;;
    *) echo "usage: $0 [--registry <dir>] [1.0.0] [2.0.0]" >&2; exit 2 ;;
  esac
done
[ ${#versions[@]} -gt 0 ] || versions=(1.0.0 2.0.0)
wants() { local v; for v in "${versions[@]}"; do [ "$v" = "$1" ] && return 0; done; return 1; }

tsc_bin="$plugin/node_modules/.bin/tsc"
[ -x "$tsc_bin" ] || tsc_bin="$repo/node_modules/.bin/tsc"
[ -x "$tsc_bin" ] || { echo "no TypeScript compiler: run npm install at the repository root (or in $plugin)" >&2; exit 1; }

echo "== building the plugin API"
(cd "$repo" && "$tsc_bin" -b kernel/plugin-api)

build() { # <dir>: a clean build of the plugin in <dir>
  rm -rf "$1/dist"
  "$tsc_bin" -p "$1"
}

publish_v1() {
  # 1.0.0, in a temporary copy inside plugins-registry/ (so that the repository's node_modules are found).
  local v1  # work stays global: the EXIT trap removes it if the build fails
  work="$(mktemp -d "$registry/.build-mod_example.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  v1="$work/mod_example"
  mkdir -p "$v1"
  cp -R "$plugin/package.json" "$plugin/tsconfig.json" "$plugin/README.md" "$plugin/src" "$v1/"
  if [ -d "$plugin/node_modules" ]; then ln -s "$plugin/node_modules" "$v1/node_modules"; fi
  cp "$plugin/history/1.0.0/echo.ts" "$v1/src/echo.ts"
  node - "$v1" <<'NODE'
// Sets the version to 1.0.0 in the copy's package.json and definition, checking each change happened once.
const { readFileSync, writeFileSync } = require('node:fs');
const dir = process.argv[2];
const pkgFile = `${dir}/package.json`;
const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
if (pkg.version !== '2.0.0') throw new Error(`expected the source at 2.0.0, found ${pkg.version}`);
pkg.version = '1.0.0';
writeFileSync(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`);
const indexFile = `${dir}/src/index.ts`;
const source = readFileSync(indexFile, 'utf8');
const matches = source.match(/version: '2\.0\.0'/g) ?? [];
if (matches.length !== 1) throw new Error(`expected one "version: '2.0.0'" in src/index.ts, found ${matches.length}`);
writeFileSync(indexFile, source.replace("version: '2.0.0'", "version: '1.0.0'"));
NODE
  echo "== mod_example 1.0.0"
  build "$v1"
  node "$tools/publish.mjs" "$plugin" --version-dir "$v1" --key "$key" --publisher "$publisher" --registry "$target"
  rm -rf "$work"
  trap - EXIT
}

publish_v2() {
  echo "== mod_example 2.0.0"
  build "$plugin"
  node "$tools/publish.mjs" "$plugin" --key "$key" --publisher "$publisher" --registry "$target"
}

if wants 1.0.0; then publish_v1; fi
if wants 2.0.0; then publish_v2; fi

echo "== verifying $target"
node "$tools/verify.mjs" --registry "$target" --trust "$publisher=$(cat "$registry/keys/service-examples.pub")"
