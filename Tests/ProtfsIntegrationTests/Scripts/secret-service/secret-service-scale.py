"""10,000 items through the provider, then searches that must find exactly the right ones:
stores COUNT items in one process (CreateItem over a plain session, as a password manager's
import does), each with a unique attribute `n` and one of 100 `group`s, then searches by
one attribute, by two, by one that matches none, through secret-tool (libsecret) and
secretstorage, and reads secrets back. Prints "ok"; any failure raises.
Usage: secret-service-scale.py COUNT"""
import subprocess
import sys
import dbus
import secretstorage

count = int(sys.argv[1])
groups = 100
schema = "org.example.Scale"

bus = dbus.SessionBus()
service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
_, session = service.OpenSession("plain", dbus.String("", variant_level=1))
collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/aliases/default"),
                            "org.freedesktop.Secret.Collection")
for n in range(count):
    attributes = {"xdg:schema": schema, "n": str(n), "group": str(n % groups)}
    properties = {"org.freedesktop.Secret.Item.Label": dbus.String(f"Scale {n}", variant_level=1),
                  "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(attributes, signature="ss", variant_level=1)}
    secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(f"secret-{n}".encode()), "text/plain"), signature="oayays")
    _, prompt = collection.CreateItem(properties, secret, False, timeout=60)
    assert prompt == "/", prompt


def secret_tool(*arguments):
    run = subprocess.run(["secret-tool", *arguments], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, (arguments, run.returncode, run.stderr)
    return run.stdout


# secret-tool: lookup by a unique attribute, and a search printing every match of two.
for n in [0, count // 2 + 1, count - 1]:
    assert secret_tool("lookup", "xdg:schema", schema, "n", str(n)) == f"secret-{n}", n
printed = secret_tool("search", "--all", "group", "7", "n", "107")
assert printed.count("secret = ") == 1 and "secret = secret-107\n" in printed, printed
run = subprocess.run(["secret-tool", "lookup", "n", str(count)], capture_output=True, text=True, timeout=60)
assert run.returncode != 0 and run.stdout == "", run

# secretstorage: a group is exactly its hundredth, with the right secrets.
connection = secretstorage.dbus_init()
default = secretstorage.get_default_collection(connection)
group = list(default.search_items({"group": "7"}))
expected = {str(n) for n in range(7, count, groups)}
assert sorted(item.get_attributes()["n"] for item in group) == sorted(expected), len(group)
assert all(item.get_secret() == f"secret-{item.get_attributes()['n']}".encode() for item in group[:20])
assert list(default.search_items({"group": "7", "n": "108"})) == []
assert list(default.search_items({"group": str(groups)})) == []
connection.close()
# The collection lists them all (as paths: an object per item would be 10,000 more calls).
items = collection.Get("org.freedesktop.Secret.Collection", "Items", dbus_interface="org.freedesktop.DBus.Properties")
assert len(set(items)) == count, len(items)
print("ok")
