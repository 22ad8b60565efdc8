"""docs/FORMAT.md "Keychain items" for the make-vectors.py scripts of items-v1 and items-v2:
the record name, the wrapping key and the sealed record of one version, computed from the
text alone (libsodium through ctypes, keyed BLAKE2b from hashlib)."""
import hashlib, struct
from sodium_vectors import subkey, seal, base64url

# accessibility id -> (name, class id, this device only)
ACCESSIBILITY = {
    1: ("whenUnlocked", 1, False), 2: ("afterFirstUnlock", 3, False), 3: ("always", 4, False),
    4: ("whenPasscodeSetThisDeviceOnly", 1, True), 5: ("whenUnlockedThisDeviceOnly", 1, True),
    6: ("afterFirstUnlockThisDeviceOnly", 3, True), 7: ("alwaysThisDeviceOnly", 4, True),
}


class ItemKeys:
    def __init__(self, filesystem_key, device_key, vault_id, class_keys):
        self.name_key = subkey(filesystem_key, b"pfitmnam")
        self.metadata_key = subkey(filesystem_key, b"pfitmmet")
        self.device_item_key = subkey(device_key, b"pfitmdev")
        self.vault_id = vault_id
        self.class_keys = class_keys
        self.header = {"filesystemKey": filesystem_key.hex(), "deviceKey": device_key.hex(), "vaultID": vault_id.hex(),
                       "classKeys": {str(k): v.hex() for k, v in class_keys.items()}}

    def document(self, version, items):
        """The whole JSON file of `version`'s vectors."""
        return {"comment": f"Known answers for docs/FORMAT.md 'Keychain items', version {version}, made by "
                           "make-vectors.py. Byte strings are hex; class keys by class id. Never regenerate: a mismatch "
                           "means the format changed.", **self.header, "items": items}

    def record_name(self, owner, service, account):
        message = struct.pack("<I", owner)
        for text in (service, account):
            message += struct.pack("<I", len(text)) + text
        return base64url(hashlib.blake2b(message, digest_size=32, key=self.name_key).digest())

    def wrap_key(self, accessibility):
        _, class_id, device_only = ACCESSIBILITY[accessibility]
        key = self.class_keys[class_id]
        if device_only:
            key = hashlib.blake2b(b"protfs item device binding v1" + self.vault_id + key, digest_size=32,
                                  key=self.device_item_key).digest()
        return key

    def record(self, version, name, accessibility, metadata, secret, item_id, item_key, seed):
        """The whole record file; nonces follow from `seed`."""
        ad = b"PROTFSIT" + struct.pack("<H", version) + self.vault_id + item_id + name.encode()
        nonces = [bytes((seed + part * 24 + i) % 256 for i in range(24)) for part in range(3)]
        sealed_metadata = seal(metadata, ad + b"\x01", self.metadata_key, nonces[0])
        wrapped_key = seal(item_key, ad + bytes([2, accessibility]), self.wrap_key(accessibility), nonces[1])
        sealed_secret = seal(secret, ad + bytes([3, accessibility]), item_key, nonces[2])
        return (b"PROTFSIT" + struct.pack("<HH", version, 0) + item_id + struct.pack("<I", len(sealed_metadata))
                + sealed_metadata + wrapped_key + sealed_secret)


def described(owner, accessibility, service, account, label, created, modified, secret, name, record, **more):
    """The JSON object of one vector: the fields both versions have, then `more`."""
    return {"owner": owner, "accessibility": ACCESSIBILITY[accessibility][0], "service": service.decode(),
            "account": account.decode(), "label": label.decode(), **more, "created": created, "modified": modified,
            "secret": secret.hex(), "recordName": name, "record": record.hex()}
