# Sourced by the CI steps: installs that are safe when two steps run at once.
#
# `.ci/run` runs two steps at a time, and neither dpkg nor rustup takes two
# installs at once (dpkg fails on its lock; two `rustup toolchain install`s of
# one toolchain can leave it half-written). Every install goes through
# `ci_locked`, one lock for the whole machine; installs are idempotent, so a
# step that waited finds the work done.

ci_locked() { # COMMAND...: runs COMMAND holding the CI install lock
    flock "${TMPDIR:-/tmp}/hwcrypt-ci-install.lock" "$@"
}

ci_apt_install() { # PACKAGE...: installs the packages dpkg does not have
    local missing=() pkg sudo=""
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "== installing ${missing[*]}"
    ci_locked $sudo apt-get update -qq
    ci_locked $sudo env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq "${missing[@]}" >/dev/null
}

ci_nightly() { # installs the nightly toolchain (minimal profile) where missing
    rustup run nightly rustc --version >/dev/null 2>&1 ||
        ci_locked sh -c 'rustup run nightly rustc --version >/dev/null 2>&1 ||
            rustup toolchain install nightly --profile minimal'
}
