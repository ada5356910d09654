# TLS on 127.0.0.1, sourced by run.sh (uses its check, WORK, CONF, MISSING):
# curl downloads a file from `openssl s_server -WWW` over TLS 1.3
# (AES-128/256-GCM, ChaCha20-Poly1305) and TLS 1.2 (ECDHE-ECDSA with
# AES-128/256-GCM and ChaCha20-Poly1305, the records through `tlsaad`),
# with the provider in the server, in the client, in both; the hashes must
# match. The server side proves the provider is mapped into s_server; the
# client side proves curl loaded it (LD_DEBUG=files).

T=$WORK/tls
mkdir -p "$T/www"
TLS_PORT=$((PORT + 1))
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -subj /CN=localhost -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
head -c $((8 * 1024 * 1024 + 5)) /dev/urandom >"$T/www/payload"
TLS_SUM=$(sha256sum <"$T/www/payload" | cut -d' ' -f1)

start_tls_server() { # start_tls_server CONF
    [ -n "$TLS_PID" ] && kill "$TLS_PID" 2>/dev/null && wait "$TLS_PID" 2>/dev/null || true
    (cd "$T/www" && exec env OPENSSL_CONF="$1" openssl s_server -quiet -WWW \
        -accept "127.0.0.1:$TLS_PORT" -cert "$T/cert.pem" -key "$T/key.pem" \
        </dev/null >"$T/server.log" 2>&1) &
    TLS_PID=$!
    for _ in $(seq 100); do
        curl -sk -o /dev/null "https://127.0.0.1:$TLS_PORT/payload" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "s_server did not start"
    cat "$T/server.log"
    return 1
}

# tls_fetch CLIENT_CONF SERVER_SIDE CURL_OPTS...
tls_fetch() {
    local conf=$1 server=$2
    shift 2
    local sum
    sum=$(LD_DEBUG=files OPENSSL_CONF=$conf curl -sk "$@" \
        "https://127.0.0.1:$TLS_PORT/payload" 2>"$T/curl.err" | sha256sum | cut -d' ' -f1)
    [ "$sum" = "$TLS_SUM" ] || { echo "hash differs"; tail -5 "$T/curl.err"; return 1; }
    if [ "$server" = hwcrypt ]; then
        grep -q hwcrypt.so "/proc/$TLS_PID/maps" || { echo "provider not mapped in s_server"; return 1; }
    fi
    if [ "$conf" = "$CONF" ]; then
        grep -q 'calling init: .*hwcrypt.so' "$T/curl.err" || { echo "provider not loaded in curl"; return 1; }
    fi
}

TLS_CASES=(
    "TLS 1.3 AES-128-GCM|--tlsv1.3 --tls13-ciphers TLS_AES_128_GCM_SHA256"
    "TLS 1.3 AES-256-GCM|--tlsv1.3 --tls13-ciphers TLS_AES_256_GCM_SHA384"
    "TLS 1.3 ChaCha20-Poly1305|--tlsv1.3 --tls13-ciphers TLS_CHACHA20_POLY1305_SHA256"
    "TLS 1.2 ECDHE-ECDSA-AES128-GCM|--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-GCM-SHA256"
    "TLS 1.2 ECDHE-ECDSA-AES256-GCM|--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-AES256-GCM-SHA384"
    "TLS 1.2 ECDHE-ECDSA-CHACHA20-POLY1305|--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-CHACHA20-POLY1305"
)

for side in both server client; do
    case $side in
    both) server_conf=$CONF client_conf=$CONF mark=hwcrypt where="on both ends" ;;
    server) server_conf=$CONF client_conf=/dev/null mark=hwcrypt where="in the server only" ;;
    client) server_conf=/dev/null client_conf=$CONF mark=stock where="in the client only" ;;
    esac
    start_tls_server "$server_conf"
    for case in "${TLS_CASES[@]}"; do
        # shellcheck disable=SC2086 # the options are words
        check "curl ${case%%|*}: provider $where" tls_fetch "$client_conf" "$mark" ${case#*|}
    done
done
check "missing module: curl still works" tls_fetch "$MISSING" stock --tlsv1.3
start_tls_server "$MISSING"
check "missing module: s_server still works" tls_fetch /dev/null stock --tlsv1.3
kill "$TLS_PID" 2>/dev/null && wait "$TLS_PID" 2>/dev/null || true
TLS_PID=""
