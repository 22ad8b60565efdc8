/* tpm2-tss' ESAPI, the TCTI loader and the marshalling library, with the few templates
 * whose unions read better in C than in Swift. */
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

/* The storage root key's template (TCG provisioning guidance, as systemd's SRK): a
 * restricted decryption key, AES-128-CFB for its children, no dictionary-attack
 * protection (it has no secret), an empty unique field so every call yields the same key. */
static inline TPM2B_PUBLIC protfs_tpm_srk_template(int elliptic) {
    TPM2B_PUBLIC t;
    memset(&t, 0, sizeof t);
    t.publicArea.nameAlg = TPM2_ALG_SHA256;
    t.publicArea.objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM
        | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA;
    if (elliptic) {
        t.publicArea.type = TPM2_ALG_ECC;
        t.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
        t.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
        t.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
        t.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
        t.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
        t.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
        t.publicArea.unique.ecc.x.size = 32;
        t.publicArea.unique.ecc.y.size = 32;
    } else {
        t.publicArea.type = TPM2_ALG_RSA;
        t.publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
        t.publicArea.parameters.rsaDetail.symmetric.keyBits.aes = 128;
        t.publicArea.parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CFB;
        t.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
        t.publicArea.parameters.rsaDetail.keyBits = 2048;
        t.publicArea.unique.rsa.size = 256;
    }
    return t;
}

/* A sealed data object: only this TPM, under this parent, can load it. With a policy it
 * opens only through that policy; otherwise through its auth value, and then the
 * dictionary-attack counter counts a wrong one unless `noDA`. */
static inline TPM2B_PUBLIC protfs_tpm_sealed_template(const TPM2B_DIGEST *policy, int noDA) {
    TPM2B_PUBLIC t;
    memset(&t, 0, sizeof t);
    t.publicArea.type = TPM2_ALG_KEYEDHASH;
    t.publicArea.nameAlg = TPM2_ALG_SHA256;
    t.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT;
    if (noDA) t.publicArea.objectAttributes |= TPMA_OBJECT_NODA;
    if (policy->size == 0) t.publicArea.objectAttributes |= TPMA_OBJECT_USERWITHAUTH;
    t.publicArea.authPolicy = *policy;
    t.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
    return t;
}

/* AES-128-CFB parameter encryption for a session. */
static inline TPMT_SYM_DEF protfs_tpm_session_cipher(void) {
    TPMT_SYM_DEF s;
    memset(&s, 0, sizeof s);
    s.algorithm = TPM2_ALG_AES;
    s.keyBits.aes = 128;
    s.mode.aes = TPM2_ALG_CFB;
    return s;
}

/* A selection of SHA-256 PCRs, bit i of `mask` for PCR i (0..23). */
static inline TPML_PCR_SELECTION protfs_tpm_pcr_selection(unsigned int mask) {
    TPML_PCR_SELECTION s;
    memset(&s, 0, sizeof s);
    if (mask == 0) return s;
    s.count = 1;
    s.pcrSelections[0].hash = TPM2_ALG_SHA256;
    s.pcrSelections[0].sizeofSelect = 3;
    s.pcrSelections[0].pcrSelect[0] = mask & 0xff;
    s.pcrSelections[0].pcrSelect[1] = (mask >> 8) & 0xff;
    s.pcrSelections[0].pcrSelect[2] = (mask >> 16) & 0xff;
    return s;
}

/* The response codes and properties protfs tells apart, as values Swift can see (the
 * headers build them from macros it cannot import). */
static const TSS2_RC protfs_tpm_layer = TSS2_TPM_RC_LAYER;
static const TSS2_RC protfs_tpm_resource_manager_layer = TSS2_RESMGR_TPM_RC_LAYER;
static const TPM2_RC protfs_rc_lockout = TPM2_RC_LOCKOUT;
static const TPM2_RC protfs_rc_auth_fail = TPM2_RC_AUTH_FAIL;
static const TPM2_RC protfs_rc_bad_auth = TPM2_RC_BAD_AUTH;
static const TPM2_RC protfs_rc_policy_fail = TPM2_RC_POLICY_FAIL;
static const TPM2_RC protfs_rc_pcr_changed = TPM2_RC_PCR_CHANGED;
static const TPM2_RC protfs_rc_integrity = TPM2_RC_INTEGRITY;
static const TPM2_RC protfs_rc_binding = TPM2_RC_BINDING;
static const TPM2_RC protfs_rc_curve = TPM2_RC_CURVE;
static const TPM2_RC protfs_rc_asymmetric = TPM2_RC_ASYMMETRIC;
static const TPM2_RC protfs_rc_value = TPM2_RC_VALUE;
static const TPM2_RC protfs_rc_key_size = TPM2_RC_KEY_SIZE;
static const TPM2_RC protfs_rc_symmetric = TPM2_RC_SYMMETRIC;
static const TPM2_PT protfs_pt_lockout_counter = TPM2_PT_LOCKOUT_COUNTER;
static const TPM2_PT protfs_pt_max_auth_fail = TPM2_PT_MAX_AUTH_FAIL;
static const TPM2_PT protfs_pt_lockout_interval = TPM2_PT_LOCKOUT_INTERVAL;
