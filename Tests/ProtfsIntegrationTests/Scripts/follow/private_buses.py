#!/usr/bin/env python3
# Private message buses for the follow tests (run with Debian's /usr/bin/python3, which has
# the dbus and dbusmock modules): a "system" bus and a session bus of our own, each a
# dbus-daemon at a socket path in a scratch directory (so that a restarted bus has the same
# address), logind mocked by python3-dbusmock's own template, a mocked screen saver. Every
# process started here is killed by close(), with a deadline on every wait.
import os, signal, subprocess, time

import dbus

SESSION_CONF = "/usr/share/dbus-1/session.conf"
# Every user may connect to it, as to the machine's system bus.
SYSTEM_CONF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "private-system-bus.conf")
# The machine's system bus policy: only root owns logind's name, anyone sends signals.
SYSTEM_POLICY_CONF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "system-bus-policy.conf")
MOCK_IFACE = "org.freedesktop.DBus.Mock"
LOGIND = "org.freedesktop.login1"


def wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except dbus.exceptions.DBusException:
            pass
        time.sleep(0.05)
    raise SystemExit("timed out after %s s waiting for %s" % (seconds, what))


class Bus:
    """One dbus-daemon listening on unix:path=PATH; `config`: SESSION_CONF (only this user may
    connect), SYSTEM_CONF (every user may) or SYSTEM_POLICY_CONF (every user may, under the
    system bus' policy)."""

    def __init__(self, path, config=SESSION_CONF):
        self.address = "unix:path=" + path
        self.path = path
        self.config = config
        self.pid = None
        self.start()

    def start(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        out = subprocess.run(["dbus-daemon", "--config-file=" + self.config, "--address=" + self.address,
                              "--print-pid=1", "--fork", "--nosyslog"],
                             capture_output=True, text=True, timeout=20, check=True)
        self.pid = int(out.stdout.split()[0])
        wait_until(lambda: os.path.exists(self.path), 10, "the bus at " + self.path)
        os.chmod(self.path, 0o666)      # reachable by the other users SYSTEM_CONF lets in

    def stop(self):
        """Kills the daemon and waits until it is gone: a restart must not leave the old one
        serving the clients it had. SIGKILL, as the test runner may hand its children a
        signal mask that blocks SIGTERM."""
        if not self.pid:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 10
        while os.path.exists("/proc/%d" % self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.pid = None

    def connect(self):
        return dbus.bus.BusConnection(self.address)


class Mock:
    """A python3-dbusmock server on a bus: logind's template, or one interface."""

    def __init__(self, bus, arguments, name, log):
        self.bus, self.name = bus, name
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address, DBUS_SESSION_BUS_ADDRESS=bus.address)
        self.process = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", *arguments], env=env,
                                        stdout=log, stderr=log)
        self.connection = bus.connect()
        wait_until(lambda: self.connection.name_has_owner(name), 20, name + " on the bus")

    def object(self, path):
        return self.connection.get_object(self.name, path)

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        try:
            self.connection.close()
        except Exception:
            pass


class Logind(Mock):
    def __init__(self, bus, log):
        super().__init__(bus, ["--system", "--template", "logind"], LOGIND, log)
        self.manager = self.object("/org/freedesktop/login1")

    def add_session(self, session_id):
        self.manager.AddSession(session_id, "seat0", dbus.UInt32(os.getuid()), "protfs-follow", True,
                                dbus_interface=MOCK_IFACE)
        return self.object("/org/freedesktop/login1/session/" + session_id)

    def inhibitors(self):
        return self.manager.ListInhibitors(dbus_interface="org.freedesktop.login1.Manager")

    def prepare_for_sleep(self, going):
        self.manager.EmitSignal("org.freedesktop.login1.Manager", "PrepareForSleep", "b", [going],
                                dbus_interface=MOCK_IFACE)


class ScreenSaver(Mock):
    PATH = "/org/freedesktop/ScreenSaver"

    def __init__(self, bus, log):
        super().__init__(bus, ["org.freedesktop.ScreenSaver", self.PATH, "org.freedesktop.ScreenSaver"],
                         "org.freedesktop.ScreenSaver", log)

    def active_changed(self, active):
        self.object(self.PATH).EmitSignal("org.freedesktop.ScreenSaver", "ActiveChanged", "b", [active],
                                          dbus_interface=MOCK_IFACE)


def stop_all(*things):
    for thing in things:
        if thing is not None:
            thing.stop()
