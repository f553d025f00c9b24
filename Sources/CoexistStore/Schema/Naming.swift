/// The default naming conventions of the new schema.
public enum Naming {
    /// `createdAt` → `created_at`, `URLString` → `url_string`, `cloudGUID` → `cloud_guid`, `ICNote` → `ic_note`.
    public static func snakeCase(_ name: String) -> String {
        let characters = Array(name)
        var output = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) {
                    output.append("_")
                }
            }
            output += character.lowercased()
        }
        return output
    }
}
