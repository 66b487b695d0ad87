#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/Harnesses/*FuzzTarget.swift) with swiftc.
#
# SwiftPM cannot build a libFuzzer binary without a Package.swift target, so the modules a
# harness needs (JOSE, HTTPServer, Storage, ProviderKeys, Login's replay ledger, HeraldApple) are compiled here straight from Sources/ as static
# libraries instrumented with -sanitize=fuzzer,address; each harness is then linked against
# them with libFuzzer's main. The fuzzer runtime (libclang_rt.fuzzer) ships with the Swift
# toolchain, so no Debian package is needed.
#
# Usage: fuzz/build.sh [harness…]        (default: all)
# Env:   FUZZ_BUILD_DIR (default .build/fuzz), SWIFTC (default: swiftc on PATH or /opt/swift)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${FUZZ_BUILD_DIR:-$ROOT/.build/fuzz}"
SWIFTC="${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}"
# One package name for every module: ProviderKeys shares `package` declarations with its users.
FLAGS=(-parse-as-library -O -wmo -swift-version 6 -sanitize=fuzzer,address -g -use-ld=lld -package-name herald)
mkdir -p "$OUT"

ALL_HARNESSES=(json jws jwks query request-body claims)

# build_module NAME SOURCE_DIR [-I dir …]: a static library + .swiftmodule, rebuilt when a source
# changed or when a module named in MODULE_DEPENDS was rebuilt after it (its interface may have
# changed). MODULE_EXCLUDE (space-separated find -path patterns) leaves parts of a module out of
# the fuzz build.
build_module() {
    local name="$1" dir="$2"; shift 2
    local lib="$OUT/lib$name.a" sources stale="" excluded=()
    local patterns=()
    read -r -a patterns <<< "${MODULE_EXCLUDE:-}"  # split on spaces, without glob expansion
    for pattern in "${patterns[@]}"; do excluded+=(-not -path "$pattern"); done
    mapfile -t sources < <(find "$ROOT/$dir" -name '*.swift' "${excluded[@]}" | sort)
    for dependency in ${MODULE_DEPENDS:-}; do
        [[ "$OUT/lib$dependency.a" -nt "$lib" ]] && stale=yes
    done
    if [[ -f "$lib" && -z "$stale" ]] && [[ -z "$(find "$ROOT/$dir" "$0" -newer "$lib" -name '*.swift' -o -newer "$lib" -name build.sh | head -1)" ]]; then
        return
    fi
    echo "fuzz: compiling module $name (${#sources[@]} files)"
    "$SWIFTC" "${FLAGS[@]}" -module-name "$name" -emit-module -emit-module-path "$OUT/$name.swiftmodule" \
        -emit-library -static -o "$lib" -I "$OUT" "$@" "${sources[@]}"
}

# link_harness NAME MAIN_FILE [extra sources/flags …]
link_harness() {
    local name="$1" main="$2"; shift 2
    echo "fuzz: linking harness $name"
    # From inside $OUT: swiftc leaves the harness's module files in the working directory.
    (cd "$OUT" && "$SWIFTC" "${FLAGS[@]}" -module-name "$(echo "$name" | tr -d '-')_fuzz" -I "$OUT" \
        -I "$ROOT/Sources/COpenSSL" -I "$ROOT/Sources/CMicroHTTPD" "$ROOT/fuzz/Harnesses/$main" "$@" \
        -L "$OUT" -o "$OUT/$name")
}

harnesses=("$@")
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=("${ALL_HARNESSES[@]}")

build_module JOSE Sources/JOSE -I "$ROOT/Sources/COpenSSL"
for harness in "${harnesses[@]}"; do
    case "$harness" in
        json) link_harness json JSONFuzzTarget.swift -lJOSE ;;
        jws) link_harness jws JWSFuzzTarget.swift -lJOSE ;;
        jwks) link_harness jwks JWKSFuzzTarget.swift -lJOSE ;;
        query)
            build_module HTTPServer Sources/HTTPServer -I "$ROOT/Sources/CMicroHTTPD"
            link_harness query QueryFuzzTarget.swift -lHTTPServer ;;
        request-body)
            build_module HTTPServer Sources/HTTPServer -I "$ROOT/Sources/CMicroHTTPD"
            # JSONRequestBody lives in HeraldServer, which depends on every module; its files
            # (the decoder, its media-type reader and APIError) compile into the harness instead.
            link_harness request-body RequestBodyFuzzTarget.swift \
                "$ROOT/Sources/HeraldServer/JSON/JSONRequestBody.swift" "$ROOT/Sources/HeraldServer/JSON/HTTPRequest+MediaType.swift" \
                "$ROOT/Sources/HeraldServer/Errors/APIError.swift" -lJOSE -lHTTPServer ;;
        claims)
            # HeraldApple without the parts that need Realms, TokenIssuer and Grants (native login,
            # the web flow, Apple's API, notifications and the health read-out); it still needs Storage for the replay
            # store's types. -enable-testing lets
            # the harness read the bounds it checks accepted claims against.
            sql=(-I "$ROOT/Sources/CSQLite" -I "$ROOT/Sources/CPostgres" -Xcc -I/usr/include/postgresql)
            build_module Storage Sources/Storage "${sql[@]}"
            # Apple's key set is ProviderKeys' (shared with Google).
            MODULE_DEPENDS='JOSE' build_module ProviderKeys Sources/ProviderKeys -I "$ROOT/Sources/COpenSSL"
            # Of Login, only the replay ledger Apple's replay store is built on (the rest needs Realms).
            MODULE_EXCLUDE='*/CodeExchange/* */WebSignIn/* */SessionRequest+Client.swift */IdentityToken/I* */IdentityToken/L* */IdentityToken/R*' \
                MODULE_DEPENDS='JOSE Storage' build_module Login Sources/Login -I "$ROOT/Sources/COpenSSL" "${sql[@]}"
            MODULE_EXCLUDE='*/NativeLogin/* */WebFlow/* */AppleAPI/* */Notifications/* */Health/*' MODULE_DEPENDS='JOSE Storage ProviderKeys Login' build_module HeraldApple Sources/HeraldApple -enable-testing \
                -I "$ROOT/Sources/COpenSSL" "${sql[@]}"
            link_harness claims ClaimsFuzzTarget.swift "${sql[@]}" -lJOSE -lStorage -lProviderKeys -lLogin -lHeraldApple ;;
        *) echo "fuzz: unknown harness $harness (known: ${ALL_HARNESSES[*]})" >&2; exit 2 ;;
    esac
done
