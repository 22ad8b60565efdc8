"""One Unlock prompt run 200 times while its agent asks (SecretServiceTests): one agent runs,
every other run is refused, the prompt completes unlocked once, and then it is gone. The
agent is counting-askpass.sh, with PROMPT_SCRATCH set. Needs Debian's python3-dbus and GLib."""
import os
import sys
import dbus
from gi.repository import GLib
from unlock_prompt import pending_unlock

SCRATCH = os.environ["PROMPT_SCRATCH"]
bus, locked, prompt = pending_unlock({"app": "promptcheck"}, 0)
outcome = {}
loop = GLib.MainLoop()


def completed(dismissed, result):
    outcome.setdefault("completions", []).append((bool(dismissed), list(result)))
    loop.quit()


bus.add_signal_receiver(completed, "Completed", "org.freedesktop.Secret.Prompt", path=prompt)
runner = bus.get_object("org.freedesktop.secrets", prompt)
refused = []
for _ in range(200):
    try:
        runner.Prompt("", dbus_interface="org.freedesktop.Secret.Prompt")
    except dbus.exceptions.DBusException as error:
        refused.append(error.get_dbus_name())
if len(refused) != 199:
    sys.exit(f"FAIL: {200 - len(refused)} of 200 runs of one prompt were accepted")
open(os.path.join(SCRATCH, "release"), "w").close()
GLib.timeout_add_seconds(30, loop.quit)
loop.run()
agents = open(os.path.join(SCRATCH, "agents")).read().split()
if len(agents) != 1:
    sys.exit(f"FAIL: {len(agents)} agent processes for one prompt")
if outcome.get("completions") != [(False, [str(path) for path in locked])]:
    sys.exit(f"FAIL: the prompt did not complete unlocked once: {outcome}")
try:
    runner.Prompt("", dbus_interface="org.freedesktop.Secret.Prompt")
    sys.exit("FAIL: a completed prompt ran again")
except dbus.exceptions.DBusException as error:
    if error.get_dbus_name() != "org.freedesktop.Secret.Error.NoSuchObject":
        sys.exit(f"FAIL: a completed prompt answered {error.get_dbus_name()}")
print("ok")
