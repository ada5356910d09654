#!/usr/bin/env bash
# Documentation and packaging (issue 14):
# - the library's API docs build with no warnings (`cargo doc -D warnings`,
#   with and without the `aead` feature), and every public type's docs
#   carry a runnable example;
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TERM_COLOR=never
passed=0
failed=0
check() { # NAME COMMAND...: runs one check, counts it
    local name=$1
    shift
    echo "-- $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "FAILED: $name"
        failed=$((failed + 1))
    fi
}

docs() {
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p hwcrypt --features aead &&
        RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p hwcrypt
}
check "cargo doc -D warnings (hwcrypt)" docs

# Every `pub struct|enum|trait|type` of the library has a code block in the
# doc comment right above it (run as a doctest by `cargo test`).
examples() {
    local missing
    missing=$(awk '
        FNR == 1 { doc = ""; has = 0 }
        /^[[:space:]]*\/\/\// { doc = doc $0 "\n"; if ($0 ~ /```/) has = 1; next }
        /^[[:space:]]*#\[/ { next }
        /^pub (struct|enum|trait|type) / {
            if (!has && FILENAME !~ /lib\.rs$/) print FILENAME ":" FNR ": " $0
        }
        { doc = ""; has = 0 }
    ' $(find crates/hwcrypt/src -name '*.rs' | sort))
    if [ -n "$missing" ]; then
        echo "public types whose docs have no example:"
        echo "$missing"
        return 1
    fi
}
check "every public type's docs carry an example" examples

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
