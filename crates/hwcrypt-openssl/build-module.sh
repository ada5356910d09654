#!/usr/bin/env bash
# Builds the hwcrypt OpenSSL provider and copies it to the name OpenSSL
# loads a provider called `hwcrypt` from: hwcrypt.so. Cargo names the
# cdylib libhwcrypt_openssl.so, hence the copy.
#
# Usage: crates/hwcrypt-openssl/build-module.sh [CARGO_PROFILE]   (default: release)
# Puts hwcrypt.so beside the `hwcrypt` binary of that profile
# (target/release/hwcrypt.so; dev and test: target/debug/hwcrypt.so), where
# `hwcrypt openssl-config` finds it, and prints its path.
set -euo pipefail
cd "$(dirname "$0")/../.."
profile=${1:-release}
cargo build -q --profile "$profile" -p hwcrypt-openssl
case $profile in
dev | test) dir=debug ;;
*) dir=$profile ;;
esac
out=${CARGO_TARGET_DIR:-target}/$dir
cp "$out/libhwcrypt_openssl.so" "$out/hwcrypt.so.tmp"
mv "$out/hwcrypt.so.tmp" "$out/hwcrypt.so"
echo "$out/hwcrypt.so"
