// libsystemd: sd-bus for D-Bus (logind, the screen saver, the Secret Service), sd-daemon for
// the service manager's notifications, sd-journal for structured logs. Variadic calls do not
// import into Swift: use the non-variadic forms (sd_bus_message_append_basic,
// sd_bus_message_read_basic, sd_journal_sendv, sd_notify).
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
