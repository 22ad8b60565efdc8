#!/usr/bin/env python3
# protfsctl follow against logind and a screen saver mocked on private buses (FollowTests).
# Arguments: PROTFSCTL MOUNTPOINT PASSCODE_FILE SCRATCH_DIR SCENARIO, the vault mounted
# unlocked with a short grace. Scenarios: screen-lock, sleep, restart, gone, and the ways to
# find the session without --session: xdg-session-id, display-session; and impostor (signals
# from anyone but logind, and malformed ones from logind, change nothing); other-user UID:GID
# (follow run by a user who may not lock the vault: it locks nothing, and says so); spoofed
# UID:GID (on a bus with the system bus' policy, that user forges logind's and the bus driver's
# signals, unicast to follow and broadcast: nothing changes); slow-status (a daemon that
# never answers status still gets the screen lock's and the sleep's lock). Prints what it
# saw; exits 1 with the reason on the first failure, and always stops what it started.
import hashlib, json, os, signal, subprocess, sys, time

import dbus

from private_buses import LOGIND, MOCK_IFACE, SYSTEM_CONF, SYSTEM_POLICY_CONF, Bus, Logind, Mock, ScreenSaver, stop_all, wait_until

CTL, MNT, PASSCODE, SCRATCH, SCENARIO = sys.argv[1:6]
OTHER_USER = sys.argv[6] if SCENARIO == "other-user" else None
SPOOFER = sys.argv[6] if SCENARIO == "spoofed" else None
SESSION = "c7"


def state():
    done = subprocess.run([CTL, "status", MNT, "--json"], capture_output=True, text=True, timeout=30)
    return json.loads(done.stdout)["state"] if done.returncode == 0 else "gone"


def expect_state(wanted, seconds=20):
    wait_until(lambda: state() == wanted, seconds, "state %s (now %s)" % (wanted, state()))
    print("state", wanted)


def unlock():
    with open(PASSCODE) as passcode:
        subprocess.run([CTL, "unlock", MNT], stdin=passcode, capture_output=True, timeout=60, check=True)
    expect_state("unlocked")


def fail(message):
    raise SystemExit(message)


def screen_lock(logind, saver, follow_log):
    session = logind.object("/org/freedesktop/login1/session/" + SESSION)
    session.Lock(dbus_interface="org.freedesktop.login1.Session")
    expect_state("locking")
    expect_state("locked")          # after the grace
    session.Unlock(dbus_interface="org.freedesktop.login1.Session")
    time.sleep(1)
    if state() != "locked":
        fail("the Unlock signal changed the state to " + state())
    unlock()
    session.SetLockedHint(True, dbus_interface="org.freedesktop.login1.Session")
    expect_state("locking")
    unlock()
    session.SetLockedHint(False, dbus_interface="org.freedesktop.login1.Session")
    saver.active_changed(False)
    time.sleep(1)
    if state() != "unlocked":
        fail("ActiveChanged(false) changed the state to " + state())
    saver.active_changed(True)
    expect_state("locking")
    log = open(follow_log).read()
    for said in ["(Lock): locking", "LockedHint became true: locking", "(ActiveChanged): locking"]:
        if said not in log:
            fail("the follow log does not say %r:\n%s" % (said, log))


def daemon_pid():
    done = subprocess.run([CTL, "status", MNT, "--json"], capture_output=True, text=True, timeout=30, check=True)
    return json.loads(done.stdout)["pid"]


def sleep(logind, saver, follow_log):
    if len(logind.inhibitors()) != 1:
        fail("follow holds %d inhibitors, not 1" % len(logind.inhibitors()))
    # The order, made visible: with the daemon stopped the lock cannot finish, so the
    # inhibitor must still be held; once the daemon runs again, the first moment the mock
    # lists no inhibitor the vault must already be locked.
    pid = daemon_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        logind.prepare_for_sleep(True)
        time.sleep(1)
        if len(logind.inhibitors()) != 1:
            fail("the inhibitor was released before the vault could lock")
    finally:
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 20
    while len(logind.inhibitors()) > 0:
        if time.monotonic() > deadline:
            fail("the inhibitor was never released")
    seen = state()
    if seen != "locked":
        fail("the inhibitor was released while the vault was " + seen)
    print("inhibitor released with the vault locked")
    logind.prepare_for_sleep(False)
    wait_until(lambda: len(logind.inhibitors()) == 1, 20, "a new inhibitor after PrepareForSleep(false)")
    print("new inhibitor taken")
    what, who, why, mode = [str(x) for x in logind.inhibitors()[0][:4]]
    if (what, who, mode) != ("sleep", "protfs", "delay"):
        fail("unexpected inhibitor %r" % ((what, who, why, mode),))
    if "released the sleep inhibitor" not in open(follow_log).read():
        fail("the follow log does not say it released the inhibitor")


def impostor(logind, saver, follow_log, system):
    # Another program on the system bus sends logind's signals from logind's paths: the bus
    # delivers them to follow only from the name org.freedesktop.login1, which it cannot own.
    with open(os.path.join(SCRATCH, "mocks.log"), "a") as mock_log:
        fake = Mock(system, ["--system", "org.example.Impostor", "/org/freedesktop/login1", "org.freedesktop.login1.Manager"],
                    "org.example.Impostor", mock_log)
    try:
        manager = fake.object("/org/freedesktop/login1")
        manager.EmitSignal("org.freedesktop.login1.Manager", "PrepareForSleep", "b", [True], dbus_interface=MOCK_IFACE)
        manager.AddObject("/org/freedesktop/login1/session/" + SESSION, "org.freedesktop.login1.Session", {}, [],
                          dbus_interface=MOCK_IFACE)
        fake.object("/org/freedesktop/login1/session/" + SESSION).EmitSignal(
            "org.freedesktop.login1.Session", "Lock", "", [], dbus_interface=MOCK_IFACE)
    finally:
        stop_all(fake)
    # logind itself, with arguments of the wrong type: ignored, and said so.
    logind.manager.EmitSignal("org.freedesktop.login1.Manager", "PrepareForSleep", "s", ["yes"], dbus_interface=MOCK_IFACE)
    wait_until(lambda: "ignored a signal" in open(follow_log).read(), 20, "follow to ignore the malformed signal")
    if state() != "unlocked" or len(logind.inhibitors()) != 1:
        fail("signals not from logind, or malformed, changed something: %s, %d inhibitors" % (state(), len(logind.inhibitors())))
    print("impostor and malformed signals ignored")
    logind.prepare_for_sleep(True)      # and the real one still works
    expect_state("locked")


def unique_name_of(system, pid):
    bus = system.connect()
    try:
        driver = dbus.Interface(bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus"), "org.freedesktop.DBus")
        for name in driver.ListNames():
            if name.startswith(":") and driver.GetConnectionUnixProcessID(name) == pid:
                return str(name)
    finally:
        bus.close()
    fail("no connection of process %d on the system bus" % pid)


def spoofed(logind, follow, follow_log, system):
    # Another user sends logind's signals and the driver's NameOwnerChanged from its own
    # unique name, to follow alone (no match rule filters those) and to everyone.
    uid, gid = SPOOFER.split(":")
    session_path = "/org/freedesktop/login1/session/" + SESSION
    done = subprocess.run(["setpriv", "--reuid=" + uid, "--regid=" + gid, "--clear-groups", "/usr/bin/python3",
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "follow-spoofer.py"), system.address,
                           unique_name_of(system, follow.pid), logind.connection.get_name_owner(LOGIND), session_path],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        fail("the spoofer failed: " + done.stdout + done.stderr)
    print(done.stdout.strip())
    # logind's own malformed signal, routed after every forgery: once follow says it ignored
    # it, it has read them all.
    logind.manager.EmitSignal("org.freedesktop.login1.Manager", "PrepareForSleep", "s", ["yes"], dbus_interface=MOCK_IFACE)
    wait_until(lambda: "ignored a signal" in open(follow_log).read(), 20, "follow to ignore logind's malformed signal")
    log = open(follow_log).read()
    for said in ["locking", "going to sleep", "left the system bus", "released the sleep inhibitor"]:
        if said in log:
            fail("a forged signal was obeyed (the log says %r):\n%s" % (said, log))
    if state() != "unlocked" or len(logind.inhibitors()) != 1:
        fail("forged signals changed something: %s, %d inhibitors" % (state(), len(logind.inhibitors())))
    print("forged signals, unicast and broadcast, ignored")
    logind.prepare_for_sleep(True)      # and the real one still works
    expect_state("locked")


def slow_status(logind, follow_log):
    # The daemon's socket steps aside for a proxy that holds every status unanswered.
    canonical = os.path.realpath(MNT).encode()
    sock = "/run/protfs/%s.sock" % hashlib.sha256(canonical).hexdigest()[:16]
    real, requests = sock + ".real", os.path.join(SCRATCH, "requests.log")
    os.rename(sock, real)
    proxy = None
    try:
        proxy = subprocess.Popen(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                   "status-holding-proxy.py"), sock, real, requests])
        wait_until(lambda: os.path.exists(sock), 20, "the proxy's socket")
        lines = lambda: open(requests).read().split() if os.path.exists(requests) else []
        logind.object("/org/freedesktop/login1/session/" + SESSION).Lock(dbus_interface="org.freedesktop.login1.Session")
        wait_until(lambda: "lock" in lines(), 20, "follow's lock while status is held")
        logind.prepare_for_sleep(True)
        wait_until(lambda: lines().count("lock") == 2, 20, "follow's sleep lock while status is held")
        wait_until(lambda: len(logind.inhibitors()) == 0, 20, "the inhibitor's release")
        print("both locks sent while status went unanswered:", lines())
    finally:
        if proxy is not None:
            proxy.kill()
            proxy.wait(10)
        if os.path.exists(sock):
            os.unlink(sock)
        os.rename(real, sock)
    expect_state("locked")


def other_user(logind, follow_log):
    # The daemon refuses their lock; follow logs the refusal, keeps following, and still lets
    # the machine sleep.
    logind.object("/org/freedesktop/login1/session/" + SESSION).Lock(dbus_interface="org.freedesktop.login1.Session")
    wait_until(lambda: "(Lock), but" in open(follow_log).read(), 20, "follow to report the refused lock")
    logind.prepare_for_sleep(True)
    wait_until(lambda: len(logind.inhibitors()) == 0, 20, "the inhibitor's release")
    if "going to sleep, but" not in open(follow_log).read():
        fail("the follow log does not report the refused sleep lock")
    if state() != "unlocked":
        fail("a user who may not lock the vault locked it: " + state())
    print("a user who may not lock it locked nothing")


def restart(logind, saver, follow_log, system):
    stop_all(logind)
    system.stop()
    time.sleep(0.5)
    system.start()
    with open(os.path.join(SCRATCH, "mocks.log"), "a") as mock_log:
        logind = Logind(system, mock_log)
    try:
        logind.add_session(SESSION)
        wait_until(lambda: len(logind.inhibitors()) == 1, 30, "follow to take an inhibitor on the new bus")
        print("follow reconnected")
        logind.object("/org/freedesktop/login1/session/" + SESSION).Lock(dbus_interface="org.freedesktop.login1.Session")
        expect_state("locking")
    finally:
        stop_all(logind)


def main():
    system = Bus(os.path.join(SCRATCH, "system_bus_socket"), SYSTEM_POLICY_CONF if SPOOFER else SYSTEM_CONF)
    session_bus = Bus(os.path.join(SCRATCH, "session_bus_socket"))
    follow = logind = saver = None
    follow_log = os.path.join(SCRATCH, "follow.log")
    try:
        with open(os.path.join(SCRATCH, "mocks.log"), "a") as mock_log:
            logind = Logind(system, mock_log)
            saver = ScreenSaver(session_bus, mock_log)
        session_path = logind.add_session(SESSION).object_path
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=system.address, DBUS_SESSION_BUS_ADDRESS=session_bus.address)
        env.pop("XDG_SESSION_ID", None)
        command = [CTL, "follow", MNT, "--session", SESSION]
        if SCENARIO == "xdg-session-id":
            env["XDG_SESSION_ID"] = SESSION
            command = command[:3]
        elif SCENARIO == "display-session":
            # No session named and none of its own (as under a user unit): the user's display
            # session, which logind's user object names.
            # The template's GetUser adds a str to a UInt32 and fails: the documented answer instead.
            logind.manager.AddMethod("org.freedesktop.login1.Manager", "GetUser", "u", "o",
                                     'ret = dbus.ObjectPath("/org/freedesktop/login1/user/%d" % args[0])',
                                     dbus_interface="org.freedesktop.DBus.Mock")
            user = logind.object("/org/freedesktop/login1/user/%d" % os.getuid())
            user.Set("org.freedesktop.login1.User", "Display", dbus.Struct((SESSION, dbus.ObjectPath(session_path))),
                     dbus_interface="org.freedesktop.DBus.Properties")
            command = command[:3]
        elif OTHER_USER:
            uid, gid = OTHER_USER.split(":")
            command = ["setpriv", "--reuid=" + uid, "--regid=" + gid, "--clear-groups"] + command
            del env["DBUS_SESSION_BUS_ADDRESS"]     # root's session bus is not theirs
        with open(follow_log, "w") as log:
            follow = subprocess.Popen(command, env=env, stderr=log)
        wait_until(lambda: len(logind.inhibitors()) == 1, 20, "follow to take a sleep inhibitor")
        if not OTHER_USER:
            wait_until(lambda: "ScreenSaver on the session bus" in open(follow_log).read(), 20, "follow on the session bus")
        if SCENARIO == "screen-lock":
            screen_lock(logind, saver, follow_log)
        elif SCENARIO == "sleep":
            sleep(logind, saver, follow_log)
        elif SCENARIO == "restart":
            restart(logind, saver, follow_log, system)
        elif SCENARIO == "other-user":
            other_user(logind, follow_log)
        elif SCENARIO == "impostor":
            impostor(logind, saver, follow_log, system)
        elif SCENARIO == "slow-status":
            slow_status(logind, follow_log)
        elif SCENARIO == "spoofed":
            spoofed(logind, follow, follow_log, system)
        elif SCENARIO in ("xdg-session-id", "display-session"):
            logind.object(session_path).Lock(dbus_interface="org.freedesktop.login1.Session")
            expect_state("locking")
            how = "(XDG_SESSION_ID)" if SCENARIO == "xdg-session-id" else "the display session of user"
            if how not in open(follow_log).read():
                fail("the follow log does not say it follows %s" % how)
        elif SCENARIO == "gone":
            subprocess.run(["fusermount3", "-u", MNT], check=True, timeout=30)
            try:
                status = follow.wait(20)
            except subprocess.TimeoutExpired:
                fail("follow did not stop after the unmount")
            if status != 0:
                fail("follow exited %d after the unmount" % status)
            print("follow exited 0")
        else:
            fail("unknown scenario " + SCENARIO)
    finally:
        if follow is not None and follow.poll() is None:
            follow.kill()
            follow.wait(10)
        stop_all(logind, saver, system, session_bus)
        print("--- follow log ---")
        print(open(follow_log).read() if os.path.exists(follow_log) else "(none)")


main()
