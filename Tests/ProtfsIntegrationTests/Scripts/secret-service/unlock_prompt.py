"""The start the prompt scripts share: the Secret Service on the session bus, its one locked
item with the given attributes, and an Unlock of it, which must answer with a prompt to run.
Needs Debian's python3-dbus and GLib."""
import dbus
import dbus.mainloop.glib


def pending_unlock(attributes, unlocked_count):
    """(bus, locked items, prompt path) after asking to unlock the one locked item matching
    ATTRIBUTES, which has UNLOCKED_COUNT unlocked items beside it."""
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    service = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"),
                             "org.freedesktop.Secret.Service")
    unlocked, locked = service.SearchItems(attributes)
    assert len(unlocked) == unlocked_count and len(locked) == 1, (unlocked, locked)
    done, prompt = service.Unlock(locked)
    assert list(done) == [] and prompt != "/", (done, prompt)
    return bus, locked, prompt
