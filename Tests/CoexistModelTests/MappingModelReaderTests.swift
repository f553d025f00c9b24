import CoexistModel
import TestSupport
import Testing

/// The four mapping models objc.io Moody ships, read as Xcode wrote them.
@Suite struct MappingModelReaderTests {
    func read(_ step: String) throws -> MappingModel {
        let folder = Fixtures.moodyXcdatamodeld.split(separator: "/").dropLast().joined(separator: "/")
        return try MappingModelReader.read(path: "/" + folder + "/\(step).xcmappingmodel")
    }

    @Test func moody2To3FillsMoodContinentFromTheCountrysContinent() throws {
        let model = try read("Moody 2-Moody 3")
        #expect(model.sourceModelPath?.hasSuffix("Moody 2.xcdatamodel") == true)
        #expect(
            model.entityMappings.map(\.name).sorted() == ["ContinentToContinent", "CountryToCountry", "MoodToMood"]
        )
        let mood = try #require(model.mapping(destination: "Mood"))
        #expect(mood.source == "Mood")
        #expect(mood.policy == nil)
        #expect(
            mood.relationships.first { $0.name == "continent" }?.value
                == .destinationInstances(mapping: "ContinentToContinent", keyPath: ["country", "continent"])
        )
        #expect(mood.attributes.contains { $0.name == "remoteID" && $0.value == nil })
    }

    @Test func moody4To5ComputesIsoContinentThroughAKeyPath() throws {
        let model = try read("Moody 4-Moody 5")
        #expect(model.entityMappings.map(\.destination) == ["Mood", "Country"])
        let country = try #require(model.mapping(destination: "Country"))
        #expect(
            country.attributes.first { $0.name == "isoContinent" }?.value
                == .keyPath(["continent", "numericISO3166Code"])
        )
    }

    @Test func moody5To6NamesItsCustomPolicy() throws {
        let model = try read("Moody 5-Moody 6")
        let country = try #require(model.mapping(destination: "Country"))
        #expect(country.policy == "Migrations.Country5ToCountry6Policy")
        let continent = try #require(model.mapping(destination: "Continent"))
        #expect(continent.source == nil, "made by the policy, from no source entity")
        #expect(try read("Moody 3-Moody 4").entityMappings.count == 3)
    }

    @Test func aMissingMappingModelIsAMissingFile() {
        #expect(throws: ModelError.self) { try MappingModelReader.read(path: "/nonexistent/A-B.xcmappingmodel") }
    }
}
