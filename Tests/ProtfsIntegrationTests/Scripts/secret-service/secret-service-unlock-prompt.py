"""Unlock of a locked item through the Secret Service while no agent can ask for the passcode:
the prompt must complete, dismissed, within the bound given to the provider (the test's
timeout catches a prompt that never completes). Needs Debian's python3-dbus and GLib."""
import sys
import dbus
from gi.repository import GLib
from unlock_prompt import pending_unlock

bus, _, prompt = pending_unlock({"app": "lockcheck"}, 1)
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
