extension StoreReport {
    /// The report as aligned, human-readable lines.
    public var text: String {
        var lines: [String] = []
        lines.append("store       \(path)")
        lines.append("uuid        \(storeUUID)")
        lines.append(
            "type        \(storeType ?? "unknown"), framework version \(frameworkVersion.map(String.init) ?? "unknown")"
        )
        lines.append(
            "model       \(modelVersionIdentifiers.map { "\"\($0)\"" }.joined(separator: ", ")) (model from \(modelSource))"
        )
        lines.append("journal     \(walMode ? "WAL" : "not WAL")")
        lines.append("")
        lines.append("entities")
        let nameWidth = entities.map(\.name.count).max() ?? 0
        for entity in entities {
            let parent = entity.parent.map { " : \($0)" } ?? ""
            lines.append(
                "  \(pad(String(entity.number), 5)) \(pad(entity.name, nameWidth)) \(padLeft(String(entity.rows), 9)) rows"
                    + "  in \(entity.table ?? "(no table)")\(parent)"
            )
        }
        if !relationships.isEmpty {
            lines.append("")
            lines.append("relationships")
            for relationship in relationships {
                let arrow = relationship.toMany ? (relationship.ordered ? "->>[ordered]" : "->>") : "->"
                let inverse = relationship.inverse.map { " (inverse \($0))" } ?? ""
                lines.append(
                    "  \(relationship.entity).\(relationship.name) \(arrow) \(relationship.destination)\(inverse)"
                        + ", \(relationship.deleteRule), \(relationship.storage)"
                )
            }
        }
        lines.append("")
        if let history {
            lines.append(
                "history     \(history.transactions) transactions, \(history.changes.insert) inserts, "
                    + "\(history.changes.update) updates, \(history.changes.delete) deletes"
            )
            if let first = history.firstToken, let last = history.lastToken {
                lines.append(
                    "tokens      \(first) (\(history.firstTimestamp ?? "?")) … \(last) (\(history.lastTimestamp ?? "?"))"
                )
            }
            let shown = history.authors.prefix(8).map { $0.count > 60 ? String($0.prefix(57)) + "..." : $0 }
            let more = history.authors.count > shown.count ? ", and \(history.authors.count - shown.count) more" : ""
            lines.append("authors     \(shown.isEmpty ? "none" : shown.joined(separator: ", "))\(more)")
        } else {
            lines.append("history     none (no history tables)")
        }
        return lines.joined(separator: "\n")
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// `text` right-aligned in `width` (counts line up by their last digit).
    private func padLeft(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
