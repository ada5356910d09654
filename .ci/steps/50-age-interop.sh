#!/usr/bin/env bash
# age interop (issue 15): files written by `age` (Debian's) decrypt with
# `hwcrypt decrypt`, and files written by `hwcrypt encrypt` decrypt with
# `age -d`, byte for byte, for X25519, scrypt (age's passphrase prompt driven
# through a pty with `expect`), ssh-ed25519 and ssh-rsa (keys from
# ssh-keygen), binary and armored, sizes 0, 1, 65535, 65536, 65537, 3x64 KiB
# and 3 MiB (scrypt: a subset, each case costs two scrypt runs);
# passphrase-protected identities (encrypted OpenSSH keys, age-encrypted
# identity files) both ways, with both tools' terminal prompts. Then age
# 1.3.2 (`go install`, into a temporary GOBIN) for the post-quantum hybrid
# mlkem768x25519, both ways, the same sizes, binary and armored, and several
# recipients.
# Installs age, openssh-client and expect where missing. Prints
# "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib.sh
export CARGO_TERM_COLOR=never

if ! command -v age >/dev/null || ! command -v ssh-keygen >/dev/null || ! command -v expect >/dev/null; then
    ci_apt_install age openssh-client expect
fi
echo "age $(age --version)"

cargo build -q -p hwcrypt-cli
hw="$PWD/target/debug/hwcrypt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

age-keygen -o age-key.txt 2>/dev/null
age_recipient=$(age-keygen -y age-key.txt)
"$hw" keygen -o hw-key.txt 2>/dev/null
hw_recipient=$("$hw" keygen -y hw-key.txt)
ssh-keygen -q -t ed25519 -N '' -C interop -f ed
ssh-keygen -q -t rsa -b 2048 -N '' -C interop -f rsa
printf 'interop passphrase\n' >pass.txt

passed=0
failed=0
check() { # NAME: counts the result of the last comparison
    if [ "$1" = ok ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: $2"
    fi
}

# age with a passphrase on its terminal prompt (it reads only from a tty).
cat >age-pty.exp <<'EOF_EXP'
set timeout 120
log_user 0
spawn -noecho age {*}$argv
expect {
    -re "passphrase.*: " { send "interop passphrase\r"; exp_continue }
    eof
}
catch wait result
exit [lindex $result 3]
EOF_EXP
age_pty() { # ARGS...: runs age under a pty, answering every passphrase prompt
    expect -f age-pty.exp -- "$@"
}

sizes="0 1 65535 65536 65537 196608 3145728"
for size in $sizes; do
    head -c "$size" /dev/urandom >"in.$size"
done

for kind in x25519 ssh-ed25519 ssh-rsa scrypt; do
    case $kind in
        x25519) age_enc=(-r "$hw_recipient"); hw_dec=(-i hw-key.txt)
                hw_enc=(-r "$age_recipient"); age_dec=(-i age-key.txt) ;;
        ssh-ed25519) age_enc=(-R ed.pub); hw_dec=(-i ed); hw_enc=(-R ed.pub); age_dec=(-i ed) ;;
        ssh-rsa) age_enc=(-R rsa.pub); hw_dec=(-i rsa); hw_enc=(-R rsa.pub); age_dec=(-i rsa) ;;
        scrypt) hw_dec=(--passphrase-file pass.txt); hw_enc=(--passphrase-file pass.txt) ;;
    esac
    kind_sizes=$sizes
    [ "$kind" = scrypt ] && kind_sizes="0 65536 65537 3145728"
    for armor in binary armored; do
        a=()
        [ "$armor" = armored ] && a=(-a)
        for size in $kind_sizes; do
            name="$kind $armor $size"
            rm -f f.age out
            # age -> hwcrypt
            if [ "$kind" = scrypt ]; then
                age_pty -e -p "${a[@]}" -o f.age "in.$size" || true
            else
                age -e "${age_enc[@]}" "${a[@]}" -o f.age "in.$size"
            fi
            if "$hw" decrypt -q "${hw_dec[@]}" -o out f.age && cmp -s out "in.$size"; then
                check ok
            else
                check no "age -e | hwcrypt decrypt: $name"
            fi
            rm -f f.age out
            # hwcrypt -> age
            "$hw" encrypt -q "${hw_enc[@]}" "${a[@]}" -o f.age "in.$size"
            # (age creates no -o file for an empty plaintext: status 0 is it.)
            ok=no
            if [ "$kind" = scrypt ]; then
                age_pty -d -o out f.age && ok=yes
            else
                age -d "${age_dec[@]}" -o out f.age && ok=yes
            fi
            [ "$ok" = yes ] && [ ! -e out ] && : >out
            if [ "$ok" = yes ] && cmp -s out "in.$size"; then
                check ok
            else
                check no "hwcrypt encrypt | age -d: $name"
            fi
        done
    done
done

# Several recipients of mixed types in one file, both ways.
rm -f f.age out
age -e -r "$hw_recipient" -R ed.pub -R rsa.pub -o f.age in.65537
for id in hw-key.txt ed rsa; do
    "$hw" decrypt -q -i "$id" -o out f.age && cmp -s out in.65537 && check ok || check no "age multi -> hwcrypt -i $id"
    rm -f out
done
"$hw" encrypt -q -r "$age_recipient" -R ed.pub -R rsa.pub -o f2.age in.65537
for id in age-key.txt ed rsa; do
    age -d -i "$id" -o out f2.age && cmp -s out in.65537 && check ok || check no "hwcrypt multi -> age -i $id"
    rm -f out
done

# Passphrase-protected identities, both ways: OpenSSH keys encrypted by
# ssh-keygen (aes256-ctr, its default, and aes256-cbc: the two age reads;
# and an RSA key in the legacy PEM form, `ssh-keygen -m PEM`)
# and identity files encrypted with a passphrase (`age -p` / `hwcrypt
# encrypt --passphrase-file`, binary and armored). Each tool asks on its
# terminal (driven by expect); hwcrypt also from --passphrase-file.
sed 's/spawn -noecho age /spawn -noecho $env(HW) /' age-pty.exp >hw-pty.exp
hw_pty() { # ARGS...: runs hwcrypt under a pty, answering every passphrase prompt
    HW="$hw" expect -f hw-pty.exp -- "$@"
}
ssh-keygen -q -t ed25519 -N 'interop passphrase' -C interop -f ed-locked
ssh-keygen -q -t rsa -b 2048 -N 'interop passphrase' -C interop -f rsa-locked
ssh-keygen -q -t ed25519 -N 'interop passphrase' -Z aes256-cbc -C interop -f ed-locked-cbc
# OpenSSL's legacy PEM encryption (AES-128-CBC), read with the key's .pub.
ssh-keygen -q -t rsa -b 2048 -m PEM -N 'interop passphrase' -C interop -f rsa-locked-pem
age_pty -e -p -o age-key.txt.age age-key.txt
age_pty -e -p -a -o age-key.txt.asc age-key.txt
"$hw" encrypt -q --passphrase-file pass.txt -o hw-key.txt.age hw-key.txt
"$hw" encrypt -q --passphrase-file pass.txt -a -o hw-key.txt.asc hw-key.txt
for key in ed-locked rsa-locked ed-locked-cbc rsa-locked-pem age-key.txt.age age-key.txt.asc hw-key.txt.age hw-key.txt.asc; do
    case $key in
        age-key*) to=(-r "$hw_recipient"); hw_id=$key; age_id=hw-key.txt${key#age-key.txt}
                  from=(-r "$age_recipient") ;;
        hw-key*) continue ;;
        *) to=(-R "$key.pub"); hw_id=$key; age_id=$key; from=(-R "$key.pub") ;;
    esac
    # age -> hwcrypt -i LOCKED (age-key.txt.* opens files to age_recipient)
    rm -f f.age out
    age -e "${from[@]}" -o f.age in.65537
    "$hw" decrypt -q -i "$hw_id" --passphrase-file pass.txt -o out f.age && cmp -s out in.65537 && check ok || check no "age -e | hwcrypt decrypt -i $hw_id --passphrase-file"
    rm -f out
    hw_pty decrypt -q -i "$hw_id" -o out f.age && cmp -s out in.65537 && check ok || check no "age -e | hwcrypt decrypt -i $hw_id (terminal prompt)"
    # hwcrypt -> age -i LOCKED (hw-key.txt.* opens files to hw_recipient)
    rm -f f.age out
    "$hw" encrypt -q "${to[@]}" -o f.age in.65537
    age_pty -d -i "$age_id" -o out f.age && cmp -s out in.65537 && check ok || check no "hwcrypt encrypt | age -d -i $age_id"
done
rm -f f.age out

# age 1.3.2: the post-quantum hybrid recipient (age1pq1...), both ways.
if command -v go >/dev/null; then
    echo "== go install filippo.io/age/cmd/...@v1.3.2 ($(go version))"
    GOBIN="$work/go-bin" GOFLAGS=-modcacherw go install filippo.io/age/cmd/...@v1.3.2
    age13="$work/go-bin/age"
    echo "age $("$age13" --version)"
    "$work/go-bin/age-keygen" -pq -o age-pq.txt 2>/dev/null
    age_pq=$("$work/go-bin/age-keygen" -y age-pq.txt)
    "$hw" keygen --pq -o hw-pq.txt 2>/dev/null
    hw_pq=$("$hw" keygen -y hw-pq.txt)
    [ "$hw_pq" = "$("$work/go-bin/age-keygen" -y hw-pq.txt)" ] && check ok || check no "keygen -y: age and hwcrypt disagree on an age1pq1 recipient"
    for armor in binary armored; do
        a=()
        [ "$armor" = armored ] && a=(-a)
        for size in $sizes; do
            rm -f f.age out
            "$age13" -e -r "$hw_pq" "${a[@]}" -o f.age "in.$size"
            "$hw" decrypt -q -i hw-pq.txt -o out f.age && cmp -s out "in.$size" && check ok || check no "age 1.3 -e | hwcrypt decrypt: mlkem768x25519 $armor $size"
            rm -f f.age out
            "$hw" encrypt -q -r "$age_pq" "${a[@]}" -o f.age "in.$size"
            ok=no
            "$age13" -d -i age-pq.txt -o out f.age && ok=yes
            [ "$ok" = yes ] && [ ! -e out ] && : >out
            [ "$ok" = yes ] && cmp -s out "in.$size" && check ok || check no "hwcrypt encrypt | age 1.3 -d: mlkem768x25519 $armor $size"
        done
    done
    rm -f f.age f2.age out
    "$age13" -e -r "$hw_pq" -r "$age_pq" -o f.age in.65537
    "$hw" decrypt -q -i hw-pq.txt -o out f.age && cmp -s out in.65537 && check ok || check no "age 1.3 two pq recipients -> hwcrypt"
    rm -f out
    "$hw" encrypt -q -r "$age_pq" -r "$hw_pq" -o f2.age in.65537
    "$age13" -d -i age-pq.txt -o out f2.age && cmp -s out in.65537 && check ok || check no "hwcrypt two pq recipients -> age 1.3"
    # Mixing post-quantum and classic recipients is refused by both.
    if "$hw" encrypt -q -r "$age_pq" -r "$age_recipient" in.1 >/dev/null 2>&1; then
        check no "hwcrypt mixed pq and X25519 recipients"
    else
        check ok
    fi
else
    check no "age 1.3 interop: no go toolchain to install age 1.3.2 with"
fi

echo "age-interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
