/* fetch_provider: which provider serves each cipher name, the way programs
 * get it: the legacy object (EVP_get_cipherbyname) passed to
 * EVP_CipherInit_ex, which fetches implicitly with the global properties.
 * Prints "NAME PROVIDER" per argument; exit 1 if a name cannot be used. */
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    unsigned char key[64], iv[16] = {0};
    int rc = 0;
    for (int i = 0; i < 64; i++)
        key[i] = (unsigned char)i; /* XTS refuses equal key halves */
    for (int i = 1; i < argc; i++) {
        const EVP_CIPHER *legacy = EVP_get_cipherbyname(argv[i]);
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        const char *prov = "none";
        if (legacy != NULL && ctx != NULL
            && EVP_CipherInit_ex(ctx, legacy, NULL, key, iv, 1) == 1) {
            const OSSL_PROVIDER *p = EVP_CIPHER_get0_provider(EVP_CIPHER_CTX_get0_cipher(ctx));
            prov = p != NULL ? OSSL_PROVIDER_get0_name(p) : "legacy";
        } else {
            rc = 1;
        }
        printf("%s %s\n", argv[i], prov);
        EVP_CIPHER_CTX_free(ctx);
    }
    return rc;
}
