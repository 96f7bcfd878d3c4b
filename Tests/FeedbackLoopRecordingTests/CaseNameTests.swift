import FeedbackLoopRecording
import Testing

@Suite struct CaseNameTests {
    enum Described: CustomStringConvertible {
        case plain
        var description: String { "custom" }
    }

    indirect enum Nested: Equatable {
        case leaf
        case wrapped(Nested, Int)
    }

    @Test func casesAreNamedWithoutTheirAssociatedValues() {
        #expect(CaseName.of(Basket.State.loading) == "loading")
        #expect(CaseName.of(Basket.State.adding(["milk"], "eggs")) == "adding")
        #expect(CaseName.of(Basket.Event.ui(.add("x"))) == "ui")
        #expect(CaseName.of(Nested.wrapped(.leaf, 1)) == "wrapped")
        #expect(CaseName.of(42) == "42")
    }

    @Test func aPathDescendsIntoANestedEnumPayload() {
        #expect(CaseName.path(of: Basket.Event.ui(.add("x"))) == "ui.add")
        #expect(CaseName.path(of: Basket.Event.ui(.retry)) == "ui.retry")
        #expect(CaseName.path(of: Basket.Event.ui(.retry), depth: 1) == "ui")
        #expect(CaseName.path(of: Basket.Event.loaded(["a"])) == "loaded")
        // A tuple payload ends the path.
        #expect(CaseName.path(of: Nested.wrapped(.leaf, 1)) == "wrapped")
    }

    @Test func aCaseWithoutPayloadUsesItsDescription() {
        #expect(CaseName.of(Described.plain) == "custom")
    }
}
