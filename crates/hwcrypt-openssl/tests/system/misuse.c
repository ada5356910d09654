/* misuse: bad parameters and calls in the wrong order on hwcrypt's ciphers
 * (fetched with "provider=hwcrypt") must fail cleanly: return failure and,
 * where OpenSSL's own ciphers raise one, leave an error on the queue; never
 * crash. Also EVP_CIPHER_CTX_copy (dupctx) in the middle of a GCM message.
 * Run with OPENSSL_CONF naming the hwcrypt config. Prints one line per
 * case and "N passed, N failed" (exit 1 on a failure). */
/* EVP_CIPHER_CTX_iv() and _iv_noconst() are deprecated in 3.0 but still
 * what older programs and OpenSSH's compat layer call: tested here. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdio.h>
#include <string.h>

static int passed, failed;

static void report(const char *name, int ok)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", name);
    if (ok)
        passed++;
    else
        failed++;
}

/* A call returned failure and (when `raised`) put an error on the queue. */
static void expect_fail(const char *name, int ret, int raised)
{
    unsigned long err = ERR_peek_last_error();
    int ok = ret <= 0 && (!raised || err != 0);
    report(name, ok);
    ERR_clear_error();
}

static EVP_CIPHER_CTX *ctx_for(const char *alg, int enc, const unsigned char *key,
                               const unsigned char *iv)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, alg, "provider=hwcrypt");
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (c == NULL || ctx == NULL || !EVP_CipherInit_ex2(ctx, c, key, iv, enc, NULL)) {
        printf("FAIL cannot set up %s\n", alg);
        failed++;
        EVP_CIPHER_free(c);
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    EVP_CIPHER_free(c);
    ERR_clear_error();
    return ctx;
}

/* Encrypts 100 bytes with `alg` from provider `prov`, given no IV: OpenSSL's
 * GCM then makes a random one (readable as the updated IV). Decrypts with
 * the default provider under that IV and checks plaintext and tag. Returns
 * 1 if all of it worked; the IV in `iv_out`. */
static int gcm_random_iv(const char *prov, const unsigned char *key,
                         const unsigned char *msg, unsigned char iv_out[12])
{
    char props[64];
    unsigned char ct[128], pt[128], tag[16];
    int n = 0, m = 0, ok = 0;
    snprintf(props, sizeof(props), "provider=%s", prov);
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "AES-256-GCM", props);
    EVP_CIPHER *d = EVP_CIPHER_fetch(NULL, "AES-256-GCM", "provider=default");
    EVP_CIPHER_CTX *e = EVP_CIPHER_CTX_new(), *x = EVP_CIPHER_CTX_new();
    if (c && d && e && x
        && EVP_EncryptInit_ex2(e, c, key, NULL, NULL)
        && EVP_EncryptUpdate(e, ct, &n, msg, 100) && n == 100
        && EVP_EncryptFinal_ex(e, ct + n, &m) && m == 0
        && EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0
        && EVP_CIPHER_CTX_get_updated_iv(e, iv_out, 12)
        && EVP_DecryptInit_ex2(x, d, key, iv_out, NULL)
        && EVP_DecryptUpdate(x, pt, &n, ct, 100) && n == 100
        && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0
        && EVP_DecryptFinal_ex(x, pt + n, &m) > 0
        && memcmp(pt, msg, 100) == 0)
        ok = 1;
    EVP_CIPHER_free(c);
    EVP_CIPHER_free(d);
    EVP_CIPHER_CTX_free(e);
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return ok;
}

static EVP_CIPHER_CTX *aead_ctx(const char *alg, const char *prov, int enc,
                                const unsigned char *key, const unsigned char *iv)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, alg, prov);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    if (c == NULL || x == NULL || !EVP_CipherInit_ex2(x, c, key, iv, enc, NULL)) {
        EVP_CIPHER_free(c);
        EVP_CIPHER_CTX_free(x);
        return NULL;
    }
    EVP_CIPHER_free(c);
    return x;
}

/* A TLS 1.2 record header: sequence number, type 23, version 3.3, length. */
static void tls_header(unsigned char aad[13], unsigned long long seq, int len)
{
    for (int i = 0; i < 8; i++)
        aad[i] = (unsigned char)(seq >> (56 - 8 * i));
    aad[8] = 23, aad[9] = 3, aad[10] = 3;
    aad[11] = (unsigned char)(len >> 8), aad[12] = (unsigned char)len;
}

/* Found in an outside review of the AEADs (2026-11-29), each against the
 * default provider. */
static void aead_review_2026_11_29(const unsigned char *key, const unsigned char *iv,
                                   const unsigned char *buf)
{
    const char *hw = "provider=hwcrypt", *def = "provider=default";
    unsigned char out[512], out2[512], tag[16], tag2[16], zero[128] = {0};
    int outl, ok;
    EVP_CIPHER_CTX *x, *y;

    /* A decryption with a 12-byte tag switched to encryption mid-message
     * made the provider panic (an abort in release builds): refused now. */
    if ((x = aead_ctx("AES-128-GCM", hw, 0, key, iv)) != NULL) {
        memset(tag, 1, sizeof tag);
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 12, tag);
        EVP_DecryptUpdate(x, NULL, &outl, buf, 20);
        EVP_EncryptInit_ex2(x, NULL, NULL, NULL, NULL);
        expect_fail("GCM: direction switched mid-message, short tag", EVP_EncryptFinal_ex(x, out, &outl), 0);
        EVP_CIPHER_CTX_free(x);
    }
    /* The same key given again mid-message with no IV restarted the message
     * under its IV (the keystream again): refused until a new IV. */
    if ((x = aead_ctx("AES-256-GCM", hw, 1, key, iv)) != NULL) {
        ok = EVP_EncryptUpdate(x, out, &outl, zero, 64) == 1;
        ok &= EVP_EncryptInit_ex2(x, NULL, key, NULL, NULL) == 1;
        int r = EVP_EncryptUpdate(x, out2, &outl, zero, 64);
        report("GCM: same key mid-message, no IV: no keystream again", ok && r <= 0);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(x);
    }
    /* A tag length left from an earlier message: a later 16-byte tag given
     * after the data verifies. */
    if ((x = aead_ctx("AES-128-GCM", hw, 1, key, iv)) != NULL
        && (y = aead_ctx("AES-128-GCM", hw, 0, key, iv)) != NULL) {
        unsigned char iv2[12];
        memcpy(iv2, iv, 12);
        iv2[0] ^= 0xff;
        ok = EVP_EncryptUpdate(x, out, &outl, buf, 100) && EVP_EncryptFinal_ex(x, out + 100, &outl)
            && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag)
            && EVP_EncryptInit_ex2(x, NULL, NULL, iv2, NULL)
            && EVP_EncryptUpdate(x, out2, &outl, buf, 100) && EVP_EncryptFinal_ex(x, out2 + 100, &outl)
            && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag2);
        unsigned char pt[128];
        ok &= EVP_CIPHER_CTX_ctrl(y, EVP_CTRL_AEAD_SET_TAG, 12, tag) > 0
            && EVP_DecryptUpdate(y, pt, &outl, out, 100) && EVP_DecryptFinal_ex(y, pt, &outl) > 0
            && EVP_DecryptInit_ex2(y, NULL, NULL, iv2, NULL)
            && EVP_DecryptUpdate(y, pt, &outl, out2, 100)
            && EVP_CIPHER_CTX_ctrl(y, EVP_CTRL_AEAD_SET_TAG, 16, tag2) > 0
            && EVP_DecryptFinal_ex(y, pt, &outl) > 0;
        report("GCM: a 16-byte tag after a message with a 12-byte one", ok);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(x);
        EVP_CIPHER_CTX_free(y);
    }
    /* Final after tlsaad: fails, and the record with it (the record's IV
     * made a tag, then sealed the record). */
    if ((x = aead_ctx("AES-128-GCM", hw, 1, key, NULL)) != NULL) {
        unsigned char fixed[4] = {9, 8, 7, 6}, aad[13], rec[8 + 32 + 16] = {0};
        tls_header(aad, 0, 8 + 32 + 16);
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IV_FIXED, 4, fixed);
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, aad);
        ok = EVP_EncryptFinal_ex(x, out, &outl) <= 0;
        ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) <= 0;
        ok &= EVP_Cipher(x, rec, rec, sizeof rec) <= 0;
        report("GCM: final after tlsaad fails, and the record after it", ok);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(x);
    }
    /* ChaCha20-Poly1305 TLS records: Final after tlsaad fails and leaves
     * the record; a record into a separate buffer works; a call of the
     * wrong length keeps the header for the right one. Byte for byte as
     * the default provider. */
    {
        unsigned char got[2][3][48 + 16];
        const char *provs[2] = {def, hw};
        ok = 1;
        for (int p = 0; p < 2; p++) {
            unsigned char fixed[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, aad[13], in[64];
            memset(got[p], 0x77, sizeof got[p]);
            if ((x = aead_ctx("ChaCha20-Poly1305", provs[p], 1, key, NULL)) == NULL) {
                ok = 0;
                continue;
            }
            ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_IV_FIXED, 12, fixed) > 0;
            tls_header(aad, 0, 32);
            ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16;
            ok &= EVP_EncryptFinal_ex(x, out, &outl) <= 0;
            memcpy(got[p][0], buf, 32);
            ok &= EVP_Cipher(x, got[p][0], got[p][0], 48) == 48;
            tls_header(aad, 1, 32);
            ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16;
            memcpy(in, buf, 32);
            ok &= EVP_Cipher(x, got[p][1], in, 48) == 48;
            tls_header(aad, 2, 10);
            ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16;
            memcpy(got[p][2], buf, 26);
            ok &= EVP_Cipher(x, got[p][2], got[p][2], 30) <= 0;
            ok &= EVP_Cipher(x, got[p][2], got[p][2], 26) == 26;
            EVP_CIPHER_CTX_free(x);
            ERR_clear_error();
        }
        report("ChaCha20-Poly1305: TLS records as the default provider's", ok && memcmp(got[0], got[1], sizeof got[0]) == 0);
    }
    /* ChaCha20-Poly1305 (EVP form): an init with neither key nor IV lets the
     * message go on, and EVP_Cipher(ctx, NULL, NULL, 0) does nothing, as
     * the default provider's; a second message under the same nonce
     * (after Final, no new IV) is refused (the default's repeats the
     * keystream). */
    {
        unsigned char t[2][16], c2[2][64];
        const char *provs[2] = {def, hw};
        ok = 1;
        for (int p = 0; p < 2; p++) {
            if ((x = aead_ctx("ChaCha20-Poly1305", provs[p], 1, key, iv + 4)) == NULL) {
                ok = 0;
                continue;
            }
            ok &= EVP_EncryptUpdate(x, NULL, &outl, buf, 13) == 1;
            ok &= EVP_EncryptUpdate(x, c2[p], &outl, zero, 32) == 1;
            ok &= EVP_EncryptInit_ex2(x, NULL, NULL, NULL, NULL) == 1;
            ok &= EVP_Cipher(x, NULL, NULL, 0) >= 0;
            ok &= EVP_EncryptUpdate(x, c2[p] + 32, &outl, zero, 32) == 1;
            ok &= EVP_EncryptFinal_ex(x, out, &outl) == 1;
            ok &= EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, t[p]) == 1;
            if (p == 1)
                ok &= EVP_EncryptUpdate(x, out, &outl, zero, 32) <= 0;
            EVP_CIPHER_CTX_free(x);
            ERR_clear_error();
        }
        report("ChaCha20-Poly1305: re-init with nothing goes on; no second message under a nonce",
               ok && memcmp(t[0], t[1], 16) == 0 && memcmp(c2[0], c2[1], 64) == 0);
    }
    /* ... not after a key changed and changed back, nor after a decryption
     * under the nonce (found in the review of these fixes). */
    if ((x = aead_ctx("ChaCha20-Poly1305", hw, 1, key, iv + 4)) != NULL) {
        unsigned char k2[32];
        memcpy(k2, key, 32);
        k2[0] ^= 1;
        ok = EVP_EncryptUpdate(x, out, &outl, zero, 32) == 1 && EVP_EncryptFinal_ex(x, out, &outl) == 1;
        ok &= EVP_EncryptInit_ex2(x, NULL, k2, NULL, NULL) == 1;
        ok &= EVP_EncryptInit_ex2(x, NULL, key, NULL, NULL) == 1;
        ok &= EVP_EncryptUpdate(x, out, &outl, zero, 32) <= 0;
        ERR_clear_error();
        EVP_CIPHER_CTX_free(x);
        if ((x = aead_ctx("ChaCha20-Poly1305", hw, 0, key, iv + 4)) != NULL) {
            ok &= EVP_DecryptUpdate(x, out, &outl, zero, 32) == 1;
            EVP_DecryptFinal_ex(x, out, &outl);
            ok &= EVP_CipherInit_ex2(x, NULL, NULL, NULL, 1, NULL) == 1;
            ok &= EVP_EncryptUpdate(x, out, &outl, zero, 32) <= 0;
            EVP_CIPHER_CTX_free(x);
        } else {
            ok = 0;
        }
        report("ChaCha20-Poly1305: no second message after a key round trip or a decryption", ok);
        ERR_clear_error();
    }
}

int main(void)
{
    unsigned char key[64], iv[16] = {1}, buf[256], out[512], tag[17];
    int outl;
    for (int i = 0; i < 64; i++)
        key[i] = (unsigned char)(i * 7 + 1);
    memset(buf, 0x5a, sizeof(buf));
    EVP_CIPHER_CTX *ctx;

    /* AES-GCM */
    if ((ctx = ctx_for("AES-128-GCM", 1, NULL, NULL)) != NULL) {
        expect_fail("GCM: IV length 0", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 0, NULL), 1);
        expect_fail("GCM: IV length 129", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 129, NULL), 1);
        expect_fail("GCM: data before the key", EVP_EncryptUpdate(ctx, out, &outl, buf, 16), 1);
        expect_fail("GCM: tag set when encrypting", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag), 1);
        expect_fail("GCM: tag read before the end", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag), 1);
        expect_fail("GCM: tlsivgen without tlsivfixed", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_IV_GEN, 8, tag), 1);
        expect_fail("GCM: tlsaad of 12 bytes", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 12, buf), 1);
        EVP_CipherInit_ex2(ctx, NULL, key, iv, 1, NULL);
        EVP_EncryptUpdate(ctx, NULL, &outl, buf, 5);
        EVP_EncryptUpdate(ctx, out, &outl, buf, 33);
        expect_fail("GCM: AAD after the data", EVP_EncryptUpdate(ctx, NULL, &outl, buf, 5), 1);
        /* dupctx mid-message: both copies end with the same tag. */
        EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
        unsigned char tag2[16];
        int ok = EVP_CIPHER_CTX_copy(copy, ctx) == 1
            && EVP_EncryptUpdate(ctx, out, &outl, buf, 40) && EVP_EncryptFinal_ex(ctx, out, &outl)
            && EVP_EncryptUpdate(copy, out, &outl, buf, 40) && EVP_EncryptFinal_ex(copy, out, &outl)
            && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag)
            && EVP_CIPHER_CTX_ctrl(copy, EVP_CTRL_AEAD_GET_TAG, 16, tag2)
            && memcmp(tag, tag2, 16) == 0;
        report("GCM: EVP_CIPHER_CTX_copy mid-message, same tag", ok);
        EVP_CIPHER_CTX_free(copy);
        expect_fail("GCM: tag of 17 bytes", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 17, tag), 1);
        expect_fail("GCM: data after the end (IV reuse)", EVP_EncryptUpdate(ctx, out, &outl, buf, 16), 1);
        EVP_CIPHER_CTX_free(ctx);
    }
    /* tlsivgen into a 0-byte buffer, and with an IV too short for the 8-byte
     * invocation field: refused (they were out-of-range indexes: a panic,
     * which aborts the host program). */
    if ((ctx = ctx_for("AES-128-GCM", 1, key, NULL)) != NULL) {
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, -1, iv);
        expect_fail("GCM: tlsivgen into 0 bytes", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_IV_GEN, 0, tag), 1);
        report("GCM: tlsivgen of 8 bytes still works after it",
               EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_IV_GEN, 8, tag) > 0);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(ctx);
    }
    if ((ctx = ctx_for("AES-128-GCM", 1, NULL, NULL)) != NULL) {
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 4, NULL);
        EVP_CipherInit_ex2(ctx, NULL, key, NULL, 1, NULL);
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, -1, iv);
        expect_fail("GCM: tlsivgen with a 4-byte IV", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_IV_GEN, 4, tag), 1);
        EVP_CIPHER_CTX_free(ctx);
    }
    /* The IV length changed after the IV was set: the old IV is not the
     * caller's at the new length; data is refused until a new IV comes. */
    if ((ctx = ctx_for("AES-128-GCM", 1, key, iv)) != NULL) {
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 16, NULL);
        expect_fail("GCM: data after the IV length changed", EVP_EncryptUpdate(ctx, out, &outl, buf, 16), 1);
        report("GCM: a new IV at the new length is taken",
               EVP_CipherInit_ex2(ctx, NULL, NULL, iv, 1, NULL) > 0
               && EVP_EncryptUpdate(ctx, out, &outl, buf, 16) > 0 && outl == 16);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(ctx);
    }
    /* Zero bytes of AAD succeed in any state (as OpenSSL's own ciphers). */
    {
        const char *aeads[] = {"AES-128-GCM", "ChaCha20-Poly1305"};
        for (int a = 0; a < 2; a++) {
            char name[96];
            if ((ctx = ctx_for(aeads[a], 1, key, iv)) == NULL)
                continue;
            EVP_EncryptUpdate(ctx, out, &outl, buf, 16);
            EVP_EncryptFinal_ex(ctx, out, &outl);
            snprintf(name, sizeof(name), "%s: zero bytes of AAD after the end", aeads[a]);
            report(name, EVP_EncryptUpdate(ctx, NULL, &outl, buf, 0) > 0);
            ERR_clear_error();
            EVP_CIPHER_CTX_free(ctx);
        }
    }
    /* TLS 1.2 records (the second review): EVP_Cipher returns the record's
     * whole length when opening too; a context that took a short tag opens
     * 16-byte-tag records; an empty update keeps the record's AAD set; after
     * a refused tlsaad no data call runs under the record IV. */
    {
        unsigned char fixed[4] = {9, 8, 7, 6}, rec[8 + 40 + 16], aad[13] = {0};
        int total = (int)sizeof(rec), ok;
        EVP_CIPHER_CTX *e = ctx_for("AES-128-GCM", 1, key, NULL);
        EVP_CIPHER_CTX *d = ctx_for("AES-128-GCM", 0, key, NULL);
        if (e != NULL && d != NULL) {
            memset(rec, 0x33, sizeof(rec));
            aad[8] = 23, aad[9] = 3, aad[10] = 3, aad[11] = 0, aad[12] = 8 + 40;
            ok = EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_GCM_SET_IV_FIXED, 4, fixed) > 0
                && EVP_CIPHER_CTX_ctrl(e, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16
                && EVP_EncryptUpdate(e, out, &outl, buf, 0) > 0 && outl == 0
                && EVP_Cipher(e, rec, rec, total) == total;
            report("GCM TLS record: sealed after an empty update (AAD kept)", ok);
            /* A 12-byte tag on an earlier message of the opening context. */
            EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_AEAD_SET_TAG, 12, tag);
            aad[12] = 8 + 40 + 16;
            ok = EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_GCM_SET_IV_FIXED, 4, fixed) > 0
                && EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16
                && EVP_Cipher(d, rec, rec, total) == total;
            for (int i = 8; ok && i < 8 + 40; i++)
                ok = rec[i] == 0x33;
            report("GCM TLS record: opened (whole length) after a short tag", ok);
        }
        EVP_CIPHER_CTX *f = ctx_for("AES-128-GCM", 1, key, NULL);
        if (f != NULL) {
            EVP_CIPHER_CTX_ctrl(f, EVP_CTRL_GCM_SET_IV_FIXED, 4, fixed);
            expect_fail("GCM TLS: tlsaad of 5 bytes", EVP_CIPHER_CTX_ctrl(f, EVP_CTRL_AEAD_TLS1_AAD, 5, aad), 1);
            expect_fail("GCM TLS: data after a refused tlsaad", EVP_Cipher(f, out, buf, 64), 0);
            EVP_CIPHER_CTX_free(f);
        }
        ERR_clear_error();
        EVP_CIPHER_CTX_free(e);
        EVP_CIPHER_CTX_free(d);
    }
    if ((ctx = ctx_for("ChaCha20-Poly1305", 1, NULL, NULL)) != NULL) {
        expect_fail("ChaCha20-Poly1305: nonce of 8 bytes", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 8, NULL), 1);
        EVP_CIPHER_CTX_free(ctx);
    }
    if ((ctx = ctx_for("AES-256-GCM", 0, key, iv)) != NULL) {
        EVP_DecryptUpdate(ctx, out, &outl, buf, 32);
        expect_fail("GCM: decryption final without a tag", EVP_DecryptFinal_ex(ctx, out, &outl), 0);
        EVP_CipherInit_ex2(ctx, NULL, NULL, iv, 0, NULL);
        memset(tag, 0, 16);
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag);
        EVP_DecryptUpdate(ctx, out, &outl, buf, 32);
        expect_fail("GCM: wrong tag", EVP_DecryptFinal_ex(ctx, out, &outl), 0);
        expect_fail("GCM: tag of 17 bytes set", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 17, tag), 1);
        EVP_CIPHER_CTX_free(ctx);
    }

    /* ECB */
    if ((ctx = ctx_for("AES-128-ECB", 1, NULL, NULL)) != NULL) {
        expect_fail("ECB: data before the key", EVP_EncryptUpdate(ctx, out, &outl, buf, 16), 1);
        EVP_CipherInit_ex2(ctx, NULL, key, NULL, 1, NULL);
        EVP_CIPHER_CTX_set_padding(ctx, 0);
        EVP_EncryptUpdate(ctx, out, &outl, buf, 5);
        expect_fail("ECB: no padding, partial final block", EVP_EncryptFinal_ex(ctx, out, &outl), 1);
        EVP_CIPHER_CTX_free(ctx);
    }
    if ((ctx = ctx_for("AES-192-ECB", 0, key, NULL)) != NULL) {
        EVP_DecryptUpdate(ctx, out, &outl, buf, 32); /* random "ciphertext": bad padding */
        int f = EVP_DecryptFinal_ex(ctx, out, &outl);
        report("ECB: bad padding refused with BAD_DECRYPT",
               f <= 0 && ERR_GET_REASON(ERR_peek_last_error()) == 100 /* PROV_R_BAD_DECRYPT */);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(ctx);
    }

    /* XTS */
    if ((ctx = ctx_for("AES-128-XTS", 1, key, iv)) != NULL) {
        expect_fail("XTS: data unit of 15 bytes", EVP_EncryptUpdate(ctx, out, &outl, buf, 15), 1);
        unsigned char same[32];
        memset(same, 3, 32);
        expect_fail("XTS: equal key halves", EVP_CipherInit_ex2(ctx, NULL, same, iv, 1, NULL), 1);
        EVP_CIPHER_CTX_free(ctx);
    }

    /* ChaCha20, ChaCha20-Poly1305 */
    if ((ctx = ctx_for("ChaCha20", 1, NULL, NULL)) != NULL) {
        size_t len = 16;
        OSSL_PARAM p[2] = {OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_KEYLEN, &len), OSSL_PARAM_END};
        expect_fail("ChaCha20: key length 16", EVP_CIPHER_CTX_set_params(ctx, p), 1);
        expect_fail("ChaCha20: data before the key", EVP_EncryptUpdate(ctx, out, &outl, buf, 16), 1);
        EVP_CIPHER_CTX_free(ctx);
    }
    if ((ctx = ctx_for("ChaCha20-Poly1305", 0, NULL, NULL)) != NULL) {
        expect_fail("ChaCha20-Poly1305: nonce of 13 bytes", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 13, NULL), 1);
        expect_fail("ChaCha20-Poly1305: tag of 17 bytes", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 17, tag), 1);
        expect_fail("ChaCha20-Poly1305: tag read when decrypting", EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag), 1);
        EVP_CipherInit_ex2(ctx, NULL, key, iv, 0, NULL);
        memset(tag, 0, 16);
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag);
        EVP_DecryptUpdate(ctx, out, &outl, buf, 100);
        expect_fail("ChaCha20-Poly1305: wrong tag", EVP_DecryptFinal_ex(ctx, out, &outl), 0);
        EVP_CIPHER_CTX_free(ctx);
    }

    /* GCM encryption with no IV set: a random 12-byte IV, as the default
     * provider makes one (checked on both: the behaviour, not an accident of
     * one provider), fresh each time, and the message decrypts under it. */
    {
        unsigned char iv1[12], iv2[12], iv3[12];
        report("GCM without an IV (default provider): random IV, decrypts",
               gcm_random_iv("default", key, buf, iv1));
        report("GCM without an IV (hwcrypt): random IV, decrypts with default",
               gcm_random_iv("hwcrypt", key, buf, iv2));
        report("GCM without an IV (hwcrypt): a fresh IV each message",
               gcm_random_iv("hwcrypt", key, buf, iv3) && memcmp(iv2, iv3, 12) != 0);
    }

    /* Found in review (2026-11-29). EVP_CIPHER_CTX_iv() on CTR pointed into
     * a finished stack frame: the pointer must stay valid, show the next
     * counter block, and a counter written through it (OpenSSH's compat
     * EVP_CIPHER_CTX_set_iv) must be used, as with the default provider. */
    {
        unsigned char z[48] = {0}, a[48], b[16], want[16], newiv[16];
        int ok = 1, k = 0;
        EVP_CIPHER_CTX *ref = NULL;
        EVP_CIPHER *dc = EVP_CIPHER_fetch(NULL, "AES-128-CTR", "provider=default");
        memset(newiv, 0xfe, 16);
        newiv[15] = 0xff;
        if ((ctx = ctx_for("AES-128-CTR", 1, key, iv)) != NULL && dc != NULL) {
            const unsigned char *p;
            ok &= EVP_EncryptUpdate(ctx, a, &k, z, 33) == 1;
            p = EVP_CIPHER_CTX_iv(ctx);
            ok &= p != NULL;
            if (p != NULL) {
                unsigned char expect[16];
                memcpy(expect, iv, 16);
                expect[15] += 3; /* two whole blocks and a partial one used */
                ok &= memcmp(p, expect, 16) == 0;
            }
            memcpy(EVP_CIPHER_CTX_iv_noconst(ctx), newiv, 16);
            ok &= EVP_EncryptUpdate(ctx, b, &k, z, 15) == 1; /* the partial block's rest */
            ok &= EVP_EncryptUpdate(ctx, b, &k, z, 16) == 1;
            ref = EVP_CIPHER_CTX_new();
            ok &= EVP_CipherInit_ex2(ref, dc, key, newiv, 1, NULL) == 1;
            ok &= EVP_EncryptUpdate(ref, want, &k, z, 16) == 1;
            ok &= memcmp(b, want, 16) == 0;
            /* A counter written and not yet used goes to a copy too. */
            {
                EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
                unsigned char c1[32], c2[32];
                memcpy(EVP_CIPHER_CTX_iv_noconst(ctx), newiv, 16);
                ok &= EVP_CIPHER_CTX_copy(copy, ctx) == 1;
                ok &= EVP_EncryptUpdate(copy, c1, &k, z, 32) == 1;
                ok &= EVP_EncryptUpdate(ctx, c2, &k, z, 32) == 1;
                ok &= memcmp(c1, c2, 32) == 0;
                EVP_CIPHER_CTX_reset(ref);
                ok &= EVP_CipherInit_ex2(ref, dc, key, newiv, 1, NULL) == 1;
                ok &= EVP_EncryptUpdate(ref, c2, &k, z, 32) == 1;
                ok &= memcmp(c1, c2, 32) == 0;
                EVP_CIPHER_CTX_free(copy);
            }
            EVP_CIPHER_CTX_free(ref);
            EVP_CIPHER_CTX_free(ctx);
        }
        EVP_CIPHER_free(dc);
        report("CTR: EVP_CIPHER_CTX_iv stays valid and takes a written counter", ok);
        ERR_clear_error();
    }
    /* NULL input or output with length 0 (a NULL slice was undefined
     * behaviour; in release the held ECB block then made an abort). */
    if ((ctx = ctx_for("AES-128-ECB", 0, key, NULL)) != NULL) {
        int ok = EVP_DecryptUpdate(ctx, out, &outl, buf, 16) == 1 && outl == 0;
        EVP_CIPHER_CTX_set_padding(ctx, 0);
        ok &= EVP_DecryptUpdate(ctx, out, &outl, NULL, 0) == 1;
        report("ECB: update with NULL input and length 0", ok);
        EVP_CIPHER_CTX_free(ctx);
        ERR_clear_error();
    }
    if ((ctx = ctx_for("AES-128-ECB", 1, key, NULL)) != NULL) {
        int ok;
        EVP_CIPHER_CTX_set_padding(ctx, 0);
        ok = EVP_EncryptUpdate(ctx, out, &outl, buf, 32) == 1 && outl == 32;
        ok &= EVP_EncryptFinal_ex(ctx, NULL, &outl) == 1 && outl == 0;
        report("ECB: final with NULL output and nothing to write", ok);
        EVP_CIPHER_CTX_free(ctx);
        ERR_clear_error();
    }

    /* Raw ChaCha20 re-initialised with the key and no IV goes on from the
     * keystream block in use, as OpenSSL's does (hwcrypt restarted at the
     * IV, which used its keystream again); the same bytes as the default
     * provider for several positions. */
    {
        int ok = 1;
        /* Two calls before the re-init: OpenSSL leaves its counter on a
         * block a call ended at the end of, if an earlier call began it. */
        size_t firsts[][2] = {{0, 0}, {1, 0}, {63, 0}, {64, 0}, {65, 0}, {100, 0}, {128, 0},
                              {200, 0}, {10, 54}, {32, 32}, {1, 63}, {63, 1}, {100, 28},
                              {30, 34}, {64, 64}, {70, 58}, {5, 5}};
        for (size_t f = 0; f < sizeof firsts / sizeof firsts[0]; f++) {
            size_t total = firsts[f][0] + firsts[f][1];
            unsigned char z[256] = {0}, got[2][512];
            const char *provs[2] = {"provider=default", "provider=hwcrypt"};
            unsigned char civ[16];
            memcpy(civ, iv, 16);
            civ[0] = 0xfe, civ[1] = 0xff, civ[2] = 0xff, civ[3] = 0xff; /* near the carry */
            for (int p = 0; p < 2; p++) {
                EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "ChaCha20", provs[p]);
                EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
                int n = 0, n2 = 0, m = 0;
                ok &= c != NULL && x != NULL && EVP_EncryptInit_ex2(x, c, key, civ, NULL) == 1;
                ok &= EVP_EncryptUpdate(x, got[p], &n, z, (int)firsts[f][0]) == 1;
                ok &= EVP_EncryptUpdate(x, got[p] + n, &n2, z, (int)firsts[f][1]) == 1;
                ok &= EVP_EncryptInit_ex2(x, NULL, key, NULL, NULL) == 1;
                ok &= EVP_EncryptUpdate(x, got[p] + n + n2, &m, z, 100) == 1;
                EVP_CIPHER_CTX_free(x);
                EVP_CIPHER_free(c);
            }
            if (memcmp(got[0], got[1], total + 100) != 0) {
                printf("     %zu + %zu differs\n", firsts[f][0], firsts[f][1]);
                ok = 0;
            }
        }
        report("ChaCha20: key-only re-init goes on as the default provider's", ok);
        ERR_clear_error();
    }

    aead_review_2026_11_29(key, iv, buf);

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
