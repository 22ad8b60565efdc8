"""Unlock of a locked item through the Secret Service while no agent can ask for the passcode:
the prompt must complete, dismissed, within the bound given to the provider (the test's
timeout catches a prompt that never completes). Needs Debian's python3-dbus and GLib."""
import sys
import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
unlocked, locked = service.SearchItems({"app": "lockcheck"})
assert len(unlocked) == 1 and len(locked) == 1, (unlocked, locked)
done, prompt = service.Unlock(locked)
assert list(done) == [] and prompt != "/", (done, prompt)
outcome = {}
loop = GLib.MainLoop()


def completed(dismissed, result):
    outcome["dismissed"] = bool(dismissed)
    loop.quit()


bus.add_signal_receiver(completed, "Completed", "org.freedesktop.Secret.Prompt", path=prompt)
bus.get_object("org.freedesktop.secrets", prompt).Prompt("", dbus_interface="org.freedesktop.Secret.Prompt")
GLib.timeout_add_seconds(30, loop.quit)
loop.run()
if outcome.get("dismissed") is not True:
    sys.exit(f"FAIL: the prompt did not complete dismissed: {outcome}")
# The collection reports the vault's lock.
properties = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/aliases/default"),
                            "org.freedesktop.DBus.Properties")
assert properties.Get("org.freedesktop.Secret.Collection", "Locked") is not None
assert bool(properties.Get("org.freedesktop.Secret.Collection", "Locked")), "the collection is unlocked while the vault is locked"
