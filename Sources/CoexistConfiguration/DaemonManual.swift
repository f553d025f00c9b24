public import CoexistRuntime

/// coexistd's manual pages, made from the same tables as its `--help` (``DaemonCommandLine/spec``) and
/// from the shipped configuration file (``DocumentedConfiguration``), so that neither can drift from them.
public enum DaemonManual {
    /// coexistd(8).
    public static var daemon: ManualPage {
        let spec = DaemonCommandLine.spec
        return ManualPage(
            name: "coexistd",
            section: 8,
            summary: "mirror a Core Data store and its new schema, and serve their change events",
            source: ProductVersion.manualSource,
            manual: "System Administration",
            synopsis: spec.synopsis,
            sections: [
                .text(
                    "Description",
                    spec.description + "\n\n" + """
                        One coexistd serves one file: a second one on the same file exits 75. It mirrors each commit
                        of either side into the other exactly once, in token order, as one SQLite transaction per
                        pass; a conflict is settled by conflict-policy and recorded; what cannot be mirrored is
                        parked (coexistctl parked) and retried, never dropped. Subscribers on the Unix socket get
                        every change as newline-delimited JSON (coexistctl tail; the README's event protocol).

                        Under systemd (Type=notify) it sends READY=1 once the event service serves, STATUS= with
                        the cursor and lag, WATCHDOG=1, RELOADING=1 on SIGHUP and STOPPING=1; with the socket unit
                        the socket is passed in (LISTEN_FDS; it must be the configured socket, else exit 78), else
                        coexistd binds the configured path itself. The socket is bound before the initial sync: while
                        it runs, status is answered with its progress (STATUS= too, with EXTEND_TIMEOUT_USEC) and
                        other requests wait until coexistd serves.
                        """
                ),
                .options("Options", spec.options.filter { $0.group == nil }),
                .options("Configuration keys", spec.options.filter { $0.group != nil }),
                .definitions(
                    "Signals",
                    [
                        (
                            "SIGTERM, SIGINT",
                            "stop after the running pass (during the initial sync, after the running chunk: the "
                                + "next start resumes it): the socket closes, exit 0"
                        ),
                        (
                            "SIGHUP",
                            "read the configuration again: keys marked reloadable apply at once, the others are "
                                + "logged as needing a restart"
                        ),
                    ]
                ),
                .definitions("Exit status", ExitCode.allCases.map { (String($0.rawValue), $0.summary) }),
                .definitions(
                    "Environment",
                    [
                        (
                            "SYSTEMD_EXEC_PID, JOURNAL_STREAM",
                            "set by systemd: when the first is this process's pid, or the second names its standard "
                                + "error, logs go to the journal with their fields"
                        ),
                        (
                            DaemonCommandLine.configEnvironment,
                            "the configuration file when no --config is given (empty: none)"
                        ),
                        ("LISTEN_FDS, LISTEN_PID", "the socket passed by coexistd.socket"),
                        ("NOTIFY_SOCKET, WATCHDOG_USEC", "readiness, status and watchdog notifications"),
                    ]
                ),
                .definitions(
                    "Logging",
                    [("(stderr)", "each line: RFC 3339 time, level, message, then FIELD=value")]
                        + LogField.all.map { ($0.name, $0.meaning) }
                ),
                .definitions(
                    "Files",
                    [
                        (DaemonCommandLine.defaultConfigFile, "the configuration (coexistd.conf(5))"),
                        ("/etc/coexist/NAME.conf", "the configuration of the template unit's instance coexistd@NAME"),
                        ("/run/coexist/coexist.sock", "the event socket (coexistd.socket)"),
                        ("/var/lib/coexist", "the default home of stores (StateDirectory=)"),
                    ]
                ),
                .text("See also", "coexistctl(1), coexistd.conf(5), systemd.service(5), sd_notify(3)"),
            ]
        )
    }

    /// coexistd.conf(5): the shipped file's comments, key by key.
    public static var configuration: ManualPage {
        var blocks = DocumentedConfiguration.text.split(separator: "\n\n").map {
            $0.split(separator: "\n").map(String.init)
        }
        let header = blocks.isEmpty ? [] : blocks.removeFirst()
        var keys: [(String, String)] = []
        var sections: [String] = []
        // Keys after a `[section]` line are that section's: shown as `[section] key = value`.
        var section = ""
        for block in blocks {
            let comment = block.filter { $0.hasPrefix("#") }.map { String($0.dropFirst().drop { $0 == " " }) }
            var settings = block.filter { !$0.hasPrefix("#") }
            if let header = settings.first, header.hasPrefix("[") {
                section = header + " "
                settings.removeFirst()
                keys.append((header, comment.joined(separator: " ")))
                continue
            }
            if settings.isEmpty {
                sections.append(comment.map { "    " + $0 }.joined(separator: "\n"))
            } else {
                keys.append((settings.map { section + $0 }.joined(separator: ", "), comment.joined(separator: " ")))
            }
        }
        let description = header.map { String($0.dropFirst().drop { $0 == " " }) }.joined(separator: "\n")
        return ManualPage(
            name: "coexistd.conf",
            section: 5,
            summary: "coexistd configuration file",
            source: ProductVersion.manualSource,
            manual: "File Formats",
            synopsis: ["(\(DaemonCommandLine.defaultConfigFile), or /etc/coexist/NAME.conf for coexistd@NAME)"],
            sections: [
                .text("Description", description),
                .definitions("Keys (each with its default)", keys),
                .text("Sections", sections.joined(separator: "\n\n")),
                .text("See also", "coexistd(8), coexistctl(1)"),
            ]
        )
    }
}
