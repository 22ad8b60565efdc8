"""Python clients against the provider: keyring's SecretService backend, secretstorage's
collection and item calls (its session is dh-ietf1024-sha256-aes128-cbc-pkcs7), a plain
session through python3-dbus, and malformed calls, which must get errors while the provider
keeps serving. Prints "ok"; any failure raises."""
import os
import dbus
import keyring
import keyring.backends.SecretService
import secretstorage

assert os.environ.get("PYTHON_KEYRING_BACKEND") == "keyring.backends.SecretService.Keyring"
assert isinstance(keyring.get_keyring(), keyring.backends.SecretService.Keyring), keyring.get_keyring()

# keyring
keyring.set_password("pip-index", "alice", "s3cr\u00e9t")
assert keyring.get_password("pip-index", "alice") == "s3cr\u00e9t"
keyring.set_password("pip-index", "alice", "second")
assert keyring.get_password("pip-index", "alice") == "second"
keyring.delete_password("pip-index", "alice")
assert keyring.get_password("pip-index", "alice") is None

# secretstorage: the default collection, items, their secrets, labels and attributes
connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection)
assert not collection.is_locked()
assert collection.collection_path == "/org/freedesktop/secrets/aliases/default" or collection.get_label()
item = collection.create_item("Token", {"xdg:schema": "org.example.Token", "host": "h1"}, b"\x00binary\xff", replace=True)
found = list(collection.search_items({"host": "h1"}))
assert [i.item_path for i in found] == [item.item_path], found
assert item.get_secret() == b"\x00binary\xff"
assert item.get_attributes() == {"xdg:schema": "org.example.Token", "host": "h1"}
item.set_label("Renamed")
assert item.get_label() == "Renamed"
item.set_attributes({"xdg:schema": "org.example.Token", "host": "h2"})
assert list(collection.search_items({"host": "h1"})) == []
item.set_secret(b"new secret")
assert item.get_secret() == b"new secret"
assert item.get_created() > 0 and item.get_modified() >= item.get_created()
again = collection.create_item("Token", {"xdg:schema": "org.example.Token", "host": "h2"}, b"replaced", replace=True)
assert again.item_path == item.item_path and item.get_secret() == b"replaced"
assert item.item_path in [i.item_path for i in collection.get_all_items()]
item.delete()
assert list(collection.search_items({"host": "h2"})) == []
connection.close()

# a plain session, and malformed calls
bus = dbus.SessionBus()
service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
_, session = service.OpenSession("plain", dbus.String("", variant_level=1))
path = "/org/freedesktop/secrets/collection/default"
collection_object = dbus.Interface(bus.get_object("org.freedesktop.secrets", path), "org.freedesktop.Secret.Collection")
properties = {"org.freedesktop.Secret.Item.Label": dbus.String("Plain", variant_level=1),
              "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"plain": "yes"}, signature="ss", variant_level=1)}
secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"over plain"), "text/plain"), signature="oayays")
item_path, prompt = collection_object.CreateItem(properties, secret, False)
assert prompt == "/"
secrets = service.GetSecrets([item_path], session)
assert bytes(secrets[item_path][2]) == b"over plain", secrets


def refused(call, name):
    try:
        call()
    except dbus.exceptions.DBusException as error:
        assert error.get_dbus_name() == name, (error.get_dbus_name(), name)
        return
    raise AssertionError(f"no {name}")


refused(lambda: service.OpenSession("rot13", dbus.String("", variant_level=1)), "org.freedesktop.DBus.Error.NotSupported")
refused(lambda: service.OpenSession("dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.ByteArray(b"\x01", variant_level=1)),
        "org.freedesktop.DBus.Error.InvalidArgs")
refused(lambda: service.OpenSession("dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.String("x", variant_level=1)),
        "org.freedesktop.DBus.Error.InvalidArgs")
refused(lambda: service.SearchItems("not a map"), "org.freedesktop.DBus.Error.InvalidArgs")
refused(lambda: service.GetSecrets([item_path], dbus.ObjectPath("/org/freedesktop/secrets/session/s999999")), "org.freedesktop.Secret.Error.NoSession")
refused(lambda: collection_object.CreateItem(dbus.Dictionary({}, signature="sv"), dbus.Struct((dbus.ObjectPath("/nope"), dbus.ByteArray(b""), dbus.ByteArray(b""), ""), signature="oayays"), False),
        "org.freedesktop.Secret.Error.NoSession")
refused(lambda: bus.get_object("org.freedesktop.secrets", path + "/i00").GetSecret(
    session, dbus_interface="org.freedesktop.Secret.Item"), "org.freedesktop.Secret.Error.NoSuchObject")
refused(lambda: collection_object.CreateItem({"org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(
    {"protfs:accessible": "sometimes"}, signature="ss", variant_level=1)}, secret, False), "org.freedesktop.DBus.Error.InvalidArgs")
items_before = collection_object.Get("org.freedesktop.Secret.Collection", "Items", dbus_interface="org.freedesktop.DBus.Properties")
refused(lambda: collection_object.Delete(), "org.freedesktop.DBus.Error.NotSupported")
assert item_path in items_before and service.ReadAlias("default") == path
assert collection_object.Get("org.freedesktop.Secret.Collection", "Items", dbus_interface="org.freedesktop.DBus.Properties") == items_before
_, encrypted = service.OpenSession("dh-ietf1024-sha256-aes128-cbc-pkcs7", dbus.ByteArray(b"\x05", variant_level=1))
torn = dbus.Struct((encrypted, dbus.ByteArray(b"\x01" * 16), dbus.ByteArray(b"\x02" * 15), "text/plain"), signature="oayays")
refused(lambda: collection_object.CreateItem(dbus.Dictionary({}, signature="sv"), torn, False), "org.freedesktop.DBus.Error.InvalidArgs")
# Still serving after all of that.
assert bytes(service.GetSecrets([item_path], session)[item_path][2]) == b"over plain"
print("ok")
