"""keyring.get_password round trips per second against whichever provider owns
org.freedesktop.secrets (bench/secret-service stores the item first). Prints the rate."""
import sys
import time
import keyring

count = int(sys.argv[1])
keyring.set_password("bench-keyring", "user", "bench-secret")
assert keyring.get_password("bench-keyring", "user") == "bench-secret"
start = time.monotonic()
for _ in range(count):
    keyring.get_password("bench-keyring", "user")
print(f"{count / (time.monotonic() - start):.1f}")
