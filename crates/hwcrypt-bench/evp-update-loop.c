/*
 * Per-call cost of EVP_EncryptUpdate through stock OpenSSL or the hwcrypt
 * provider: N updates of LEN bytes in place on one context (what
 * `openssl speed -evp` does), timed in 400 slices; prints the best, 10th
 * percentile and median TSC ticks per call. Steadier than one-second
 * `openssl speed` cells on a shared machine, and the PAD dummy loads
 * between calls show whether consecutive calls overlap in the core
 * (docs/openssl-provider.md, the XTS item).
 *
 *   cc -O2 -o /tmp/evp-update-loop crates/hwcrypt-bench/evp-update-loop.c -lcrypto
 *   LEN=16 setarch -R /tmp/evp-update-loop aes-128-xts 8000000 0            # stock
 *   LEN=16 setarch -R /tmp/evp-update-loop aes-128-xts 8000000 0 target/release  # hwcrypt.so there
 *
 * Arguments: ALG CALLS PAD [MODULE_DIR]; LEN (default 16, at most 65536).
 * Alternate the two in separate processes and compare minima.
 */
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#define SLICES 400

static volatile unsigned long sink[64];
static unsigned char buf[65536];

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s ALG CALLS PAD [MODULE_DIR]\n", argv[0]);
        return 2;
    }
    const char *alg = argv[1];
    long n = atol(argv[2]);
    int pad = atoi(argv[3]);
    int len = getenv("LEN") ? atoi(getenv("LEN")) : 16;
    if (pad < 0 || pad > 64 || len < 1 || len > (int)sizeof buf || n < SLICES) {
        fprintf(stderr, "PAD 0..64, LEN 1..65536, CALLS >= %d\n", SLICES);
        return 2;
    }
    const char *pq = NULL;
    if (argc > 4) {
        OSSL_PROVIDER_set_default_search_path(NULL, argv[4]);
        if (!OSSL_PROVIDER_load(NULL, "hwcrypt") || !OSSL_PROVIDER_load(NULL, "default")) {
            fprintf(stderr, "cannot load the hwcrypt provider from %s\n", argv[4]);
            return 1;
        }
        pq = "?provider=hwcrypt";
    }
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, alg, pq);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    unsigned char key[64], iv[16];
    for (int i = 0; i < 64; i++)
        key[i] = (unsigned char)(i * 7 + 1);
    memset(iv, 3, sizeof iv);
    memset(buf, 5, sizeof buf);
    if (!c || !ctx || !EVP_EncryptInit_ex2(ctx, c, key, iv, NULL)) {
        fprintf(stderr, "cannot set up %s\n", alg);
        return 1;
    }
    double t[SLICES];
    int outl;
    for (int s = 0; s < SLICES; s++) {
        unsigned long t0 = __rdtsc();
        for (long i = 0; i < n / SLICES; i++) {
            EVP_EncryptUpdate(ctx, buf, &outl, buf, len);
            for (int j = 0; j < pad; j++)
                (void)sink[j];
        }
        t[s] = (double)(__rdtsc() - t0) / (double)(n / SLICES);
    }
    qsort(t, SLICES, sizeof t[0], cmp);
    const OSSL_PROVIDER *p = EVP_CIPHER_get0_provider(EVP_CIPHER_CTX_get0_cipher(ctx));
    printf("%s %d B pad %d: min %.1f p10 %.1f median %.1f ticks/call (%s)\n", alg, len, pad,
           t[0], t[SLICES / 10], t[SLICES / 2], p ? OSSL_PROVIDER_get0_name(p) : "?");
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return 0;
}
