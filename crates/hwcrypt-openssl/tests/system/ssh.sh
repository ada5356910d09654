# OpenSSH end to end on 127.0.0.1, sourced by run.sh (uses its check,
# WORK, PORT, CONF, MISSING, SSH_MIB and SSH_CIPHERS).
#
# sshd runs on a high port with generated host and user keys and the
# seccomp sandbox (its default); each transfer pipes SSH_MIB MiB through
# `ssh -c CIPHER host sha256sum` with the provider on the client, the
# server or both. The server side proves the provider is mapped into the
# post-auth sshd process (the remote shell reads /proc/$PPID/maps); the
# client side proves it was loaded with LD_DEBUG=files (on stderr: ssh
# closes every other descriptor, LD_DEBUG_OUTPUT's included).

S=$WORK/ssh
mkdir -p "$S" /run/sshd
chmod 755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$S/user_key"
cp "$S/user_key.pub" "$S/authorized_keys"
cat >"$S/sshd_config" <<CFG
Port $PORT
ListenAddress 127.0.0.1
HostKey $S/host_key
AuthorizedKeysFile $S/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile $S/sshd.pid
LogLevel DEBUG3
Subsystem sftp internal-sftp
CFG
head -c $((SSH_MIB * 1024 * 1024)) /dev/urandom >"$S/payload"
PAYLOAD_SUM=$(sha256sum <"$S/payload" | cut -d' ' -f1)

start_sshd() { # start_sshd CONF
    [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null && wait "$SSHD_PID" 2>/dev/null || true
    : >"$S/sshd.log"
    OPENSSL_CONF=$1 /usr/sbin/sshd -D -f "$S/sshd_config" -E "$S/sshd.log" &
    SSHD_PID=$!
    for _ in $(seq 100); do
        grep -q 'Server listening' "$S/sshd.log" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "sshd did not start"
    cat "$S/sshd.log"
    return 1
}

SSH_OPTS=(-F /dev/null -p "$PORT" -i "$S/user_key" -o BatchMode=yes
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR)

# ssh_transfer CLIENT_CONF CIPHER SERVER_SIDE EXTRA_SSH_OPTS...
# SERVER_SIDE: "hwcrypt" when the server must have the provider mapped.
ssh_transfer() {
    local conf=$1 cipher=$2 server=$3
    shift 3
    local out
    out=$(LD_DEBUG=files OPENSSL_CONF=$conf \
        ssh "${SSH_OPTS[@]}" -c "$cipher" "$@" root@127.0.0.1 \
        'sha256sum | cut -d" " -f1; grep -c hwcrypt.so /proc/$PPID/maps || true' \
        <"$S/payload" 2>"$S/ssh.err")
    echo "$out"
    [ "$(sed -n 1p <<<"$out")" = "$PAYLOAD_SUM" ] || { echo "hash differs"; return 1; }
    local mapped
    mapped=$(sed -n 2p <<<"$out")
    if [ "$server" = hwcrypt ]; then
        [ "$mapped" -gt 0 ] || { echo "provider not mapped in sshd"; return 1; }
    else
        [ "$mapped" -eq 0 ] || { echo "provider mapped in sshd"; return 1; }
    fi
    if [ "$conf" = "$CONF" ]; then
        grep -q 'calling init: .*hwcrypt.so' "$S/ssh.err" || { echo "provider not loaded in ssh"; return 1; }
    fi
}

sandbox_clean() {
    grep -q 'attaching seccomp filter' "$S/sshd.log" || { echo "no seccomp filter in the log"; return 1; }
    if grep -Ei 'killed|terminated by signal|violation|SIGSYS' "$S/sshd.log"; then
        return 1
    fi
}

start_sshd "$CONF"
for c in "${SSH_CIPHERS[@]}"; do
    check "ssh $c: $SSH_MIB MiB, provider on both ends" ssh_transfer "$CONF" "$c" hwcrypt
    check "ssh $c: $SSH_MIB MiB, provider on the server only" ssh_transfer /dev/null "$c" hwcrypt
done
check "ssh ${SSH_CIPHERS[3]}: RekeyLimit=16M, provider on both ends" \
    ssh_transfer "$CONF" "${SSH_CIPHERS[3]}" hwcrypt -o RekeyLimit=16M
sftp_transfer() {
    rm -f "$S/fetched"
    OPENSSL_CONF=$CONF sftp -q -F /dev/null -P "$PORT" -i "$S/user_key" -o BatchMode=yes \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -c "${SSH_CIPHERS[0]}" -b - root@127.0.0.1 <<<"get $S/payload $S/fetched"
    [ "$(sha256sum <"$S/fetched" | cut -d' ' -f1)" = "$PAYLOAD_SUM" ]
}
check "sftp ${SSH_CIPHERS[0]}: get $SSH_MIB MiB, provider on both ends" sftp_transfer
check "sshd log: seccomp sandbox attached, no child killed" sandbox_clean

start_sshd /dev/null
for c in "${SSH_CIPHERS[@]}"; do
    check "ssh $c: $SSH_MIB MiB, provider on the client only" ssh_transfer "$CONF" "$c" stock
done
check "missing module: ssh client still works" ssh_transfer "$MISSING" "${SSH_CIPHERS[0]}" stock

start_sshd "$MISSING"
check "missing module: sshd still works" ssh_transfer /dev/null "${SSH_CIPHERS[0]}" stock
check "sshd log (missing module): seccomp attached, no child killed" sandbox_clean
kill "$SSHD_PID" 2>/dev/null && wait "$SSHD_PID" 2>/dev/null || true
SSHD_PID=""
