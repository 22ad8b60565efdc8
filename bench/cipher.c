// The cipher table of docs/PERFORMANCE.md: one core, 4 KiB messages (a content chunk), each
// AEAD as each library computes it, sealing and opening, in MB/s (10^6 bytes per second).
// Time is the thread's CPU time, so other processes on the machine take little from a row;
// rounds go through every row in turn, so what they do take falls on all rows alike. A
// self-check first proves both XChaCha20 rows give the same bytes. Built and run by
// bench/cipher; the rows compute what protfs computes:
//   libsodium XChaCha20-Poly1305   crypto_aead_xchacha20poly1305_ietf_*
//   OpenSSL XChaCha20-Poly1305     libsodium's HChaCha20 subkey, then OpenSSL's ChaCha20-Poly1305
//                                  keyed per message (what protfs' ContentCipher does)
//   libsodium AES-256-GCM          crypto_aead_aes256gcm_*_afternm (key expanded once; 96-bit nonces)
//   OpenSSL AES-256-GCM            key set once per context, a 192-bit IV per message (protfs)
#include <openssl/evp.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { message = 4096, ad_bytes = 25 };
static unsigned char key[32], nonce[24], ad[ad_bytes], plain[message], sealed[message + 16], opened[message];
static EVP_CIPHER *chacha, *aes;
static EVP_CIPHER_CTX *context;
static crypto_aead_aes256gcm_state sodium_aes;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void fail(const char *what) {
    fprintf(stderr, "cipher bench: %s failed\n", what);
    exit(1);
}

static void sodium_xchacha(int seal) {
    unsigned long long n;
    if (seal) crypto_aead_xchacha20poly1305_ietf_encrypt(sealed, &n, plain, message, ad, ad_bytes, NULL, nonce, key);
    else if (crypto_aead_xchacha20poly1305_ietf_decrypt(opened, &n, NULL, sealed, message + 16, ad, ad_bytes, nonce, key))
        fail("libsodium XChaCha20 open");
}

static void sodium_aesgcm(int seal) {
    unsigned long long n;
    if (seal) crypto_aead_aes256gcm_encrypt_afternm(sealed, &n, plain, message, ad, ad_bytes, NULL, nonce, &sodium_aes);
    else if (crypto_aead_aes256gcm_decrypt_afternm(opened, &n, NULL, sealed, message + 16, ad, ad_bytes, nonce, &sodium_aes))
        fail("libsodium AES-GCM open");
}

static void evp_message(int seal, const unsigned char *k, const unsigned char *iv) {
    int n;
    if (EVP_CipherInit_ex(context, NULL, NULL, k, iv, seal) != 1) fail("EVP init");
    if (!seal && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, 16, sealed + message) != 1) fail("set tag");
    EVP_CipherUpdate(context, NULL, &n, ad, ad_bytes);
    EVP_CipherUpdate(context, seal ? sealed : opened, &n, seal ? plain : sealed, message);
    if (EVP_CipherFinal_ex(context, opened, &n) != 1) fail("OpenSSL open");
    if (seal) EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, sealed + message);
}

static void openssl_xchacha(int seal) {
    unsigned char subkey[32], iv[12] = {0};
    crypto_core_hchacha20(subkey, nonce, key, NULL);
    memcpy(iv + 4, nonce + 16, 8);
    evp_message(seal, subkey, iv);
    sodium_memzero(subkey, sizeof subkey);
}

static void openssl_aesgcm(int seal) { evp_message(seal, NULL, nonce); }

static void setup_chacha(void) {
    if (EVP_CipherInit_ex(context, chacha, NULL, NULL, NULL, 1) != 1) fail("ChaCha20-Poly1305 setup");
}

static void setup_aes(void) {
    if (EVP_CipherInit_ex(context, aes, NULL, NULL, NULL, 1) != 1
        || EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, 24, NULL) != 1
        || EVP_CipherInit_ex(context, NULL, NULL, key, NULL, 1) != 1) fail("AES-256-GCM setup");
}

static void setup_nothing(void) {}

// MB/s of `one` over `seconds`, sealing or opening (after one seal to open).
static double rate(void (*setup)(void), void (*one)(int), int seal, double seconds) {
    setup();
    one(1);
    long count = 0;
    double start = now(), elapsed;
    do {
        for (int i = 0; i < 256; i++) one(seal);
        count += 256;
    } while ((elapsed = now() - start) < seconds);
    return count * (double)message / elapsed / 1e6;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    double seconds = argc > 2 ? atof(argv[2]) : 0.5;
    if (sodium_init() < 0 || rounds < 1 || rounds > 99) fail("setup");
    randombytes_buf(key, sizeof key);
    randombytes_buf(nonce, sizeof nonce);
    randombytes_buf(ad, sizeof ad);
    randombytes_buf(plain, sizeof plain);
    chacha = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", NULL);
    aes = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    context = EVP_CIPHER_CTX_new();
    if (!chacha || !aes || !context) fail("OpenSSL setup");
    int sodium_has_aes = crypto_aead_aes256gcm_is_available();
    if (sodium_has_aes) crypto_aead_aes256gcm_beforenm(&sodium_aes, key);
    struct row { const char *name; void (*setup)(void); void (*one)(int); int available; } rows[] = {
        {"libsodium XChaCha20-Poly1305", setup_nothing, sodium_xchacha, 1},
        {"OpenSSL XChaCha20-Poly1305", setup_chacha, openssl_xchacha, 1},
        {"libsodium AES-256-GCM", setup_nothing, sodium_aesgcm, sodium_has_aes},
        {"OpenSSL AES-256-GCM", setup_aes, openssl_aesgcm, 1},
    };
    unsigned char by_sodium[message + 16];
    sodium_xchacha(1);
    memcpy(by_sodium, sealed, sizeof by_sodium);
    setup_chacha();
    openssl_xchacha(1);
    if (memcmp(by_sodium, sealed, sizeof by_sodium) != 0) fail("the XChaCha20 self-check");
    enum { row_count = sizeof rows / sizeof rows[0] };
    double seal[row_count][99], open[row_count][99];
    for (int i = 0; i < rounds; i++) {
        for (int r = 0; r < row_count; r++) {
            if (!rows[r].available) continue;
            seal[r][i] = rate(rows[r].setup, rows[r].one, 1, seconds);
            open[r][i] = rate(rows[r].setup, rows[r].one, 0, seconds);
        }
    }
    printf("%-30s %10s %10s   (MB/s of CPU time, one core, 4 KiB messages, median of %d rounds of %.1f s)\n", "cipher",
           "seal", "open", rounds, seconds);
    for (int r = 0; r < row_count; r++) {
        if (!rows[r].available) {
            printf("%-30s %10s %10s\n", rows[r].name, "n/a", "n/a");
            continue;
        }
        qsort(seal[r], rounds, sizeof(double), by_value);
        qsort(open[r], rounds, sizeof(double), by_value);
        printf("%-30s %10.0f %10.0f\n", rows[r].name, seal[r][rounds / 2], open[r][rounds / 2]);
    }
    EVP_CIPHER_CTX_free(context);
    return 0;
}
