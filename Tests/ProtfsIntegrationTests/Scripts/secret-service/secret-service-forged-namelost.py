"""Another client on the session bus tells the provider it lost org.freedesktop.secrets
(SecretServiceTests): sent to the provider alone and to everyone, from the client's own unique
name, the forged NameLost must not stop it; only the bus driver's counts. Needs Debian's
python3-dbus."""
import time
import dbus
import dbus.lowlevel

bus = dbus.SessionBus()
provider = bus.get_name_owner("org.freedesktop.secrets")
for destination in (provider, None):
    message = dbus.lowlevel.SignalMessage("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameLost")
    if destination:
        message.set_destination(destination)
    message.append("org.freedesktop.secrets", signature="s")
    bus.send_message(message)
service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
# Answered after the forgeries were read (one sender's messages arrive in order) ...
service.OpenSession("plain", dbus.String("", variant_level=1))
# ... and a provider that obeyed them leaves its loop at its next turn.
time.sleep(1)
service.OpenSession("plain", dbus.String("", variant_level=1))
if bus.get_name_owner("org.freedesktop.secrets") != provider:
    raise SystemExit("FAIL: the provider no longer owns org.freedesktop.secrets")
print("ok")
