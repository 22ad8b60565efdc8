#!/usr/bin/env python3
# Another user on the system bus forging logind's and the bus driver's signals for
# protfsctl follow (FollowTests, the spoofed scenario): each sent to follow's connection alone
# (a unicast signal reaches it whatever its match rules) and broadcast, from this
# connection's own unique name. Arguments: BUS_ADDRESS FOLLOW_UNIQUE_NAME LOGIND_UNIQUE_NAME
# SESSION_PATH. Returns once the bus has routed every one of them.
import sys

import dbus
import dbus.lowlevel

ADDRESS, FOLLOW, LOGIND, SESSION_PATH = sys.argv[1:5]
MANAGER = ("/org/freedesktop/login1", "org.freedesktop.login1.Manager")

FORGERIES = [
    # logind left: follow would drop its sleep inhibitor.
    ("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", "sss", ["org.freedesktop.login1", LOGIND, ""]),
    # the machine is going to sleep: follow would lock at once and drop its inhibitor.
    (*MANAGER, "PrepareForSleep", "b", [True]),
    # the session's screen locked.
    (SESSION_PATH, "org.freedesktop.login1.Session", "Lock", "", []),
    (SESSION_PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as",
     ["org.freedesktop.login1.Session", {"LockedHint": dbus.Boolean(True, variant_level=1)}, dbus.Array([], signature="s")]),
    # a screen saver's signal, though on the system bus.
    ("/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver", "ActiveChanged", "b", [True]),
]


def main():
    bus = dbus.bus.BusConnection(ADDRESS)
    for destination in (FOLLOW, None):
        for path, interface, member, signature, arguments in FORGERIES:
            message = dbus.lowlevel.SignalMessage(path, interface, member)
            if destination:
                message.set_destination(destination)
            message.append(*arguments, signature=signature)
            bus.send_message(message)
    # A round trip to the driver: it answers after routing everything sent before.
    bus.get_unique_name()
    dbus.Interface(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus").GetId()
    print("sent %d forged signals as %s" % (2 * len(FORGERIES), bus.get_unique_name()))


main()
