"""Per-search cost of SearchItems as the item count grows, against whichever provider owns
org.freedesktop.secrets (bench/secret-service-search starts protfs' on a fresh vault).
For each size in SIZES it adds items up to that size (CreateItem over a plain session; item
n has a unique `n` and one of 100 `group`s), then times ROUNDS rounds of SEARCHES calls of
Service.SearchItems by one unique attribute (1 match) and by a group (size/100 matches),
and prints the median microseconds per call of each.
Usage: secret-service-search.py ROUNDS SEARCHES SIZE..."""
import statistics
import sys
import time
import dbus

rounds, searches = int(sys.argv[1]), int(sys.argv[2])
sizes = [int(size) for size in sys.argv[3:]]
bus = dbus.SessionBus()
secrets = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
service = dbus.Interface(secrets, "org.freedesktop.Secret.Service")
session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
default = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/aliases/default"),
                         "org.freedesktop.Secret.Collection")


def add(n):
    pairs = dbus.Dictionary({"xdg:schema": "org.example.Bench", "n": str(n), "group": str(n % 100)}, signature="ss")
    value = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"bench secret"), "text/plain"), signature="oayays")
    default.CreateItem({"org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(pairs, variant_level=1)}, value, False,
                       timeout=60)


def per_call_us(attributes_of, expected):
    medians = []
    for _ in range(rounds):
        start = time.monotonic()
        for k in range(searches):
            unlocked, locked = service.SearchItems(attributes_of(k))
            assert len(unlocked) + len(locked) == expected
        medians.append((time.monotonic() - start) / searches * 1e6)
    return statistics.median(medians)


stored = 0
print(f"{'items':>7} {'unique us/search':>17} {'group us/search':>16} {'group matches':>14}")
for size in sizes:
    for n in range(stored, size):
        add(n)
    stored = size
    unique = per_call_us(lambda k: {"n": str((k * 7919) % size)}, 1)
    group = per_call_us(lambda k: {"group": str(k % 100)}, size // 100)
    print(f"{size:>7} {unique:>17.0f} {group:>16.0f} {size // 100:>14}")
