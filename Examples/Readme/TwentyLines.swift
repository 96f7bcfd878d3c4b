import FeedbackLoop

struct Movies: Sendable { var pageToLoad: Int? = 1; var titles: [String] = [] }
enum Event: Sendable { case loaded([String]), nearBottom }

func reduce(_ state: inout Movies, _ event: Event) {
    switch event {
    case .loaded(let page): state.titles += page; state.pageToLoad = nil
    case .nearBottom: state.pageToLoad = state.pageToLoad ?? state.titles.count / 20 + 1
    }
}

let loop = Loop(
    initial: Movies(),
    reduce: reduce,
    feedbacks: [
        .skippingRepeated({ $0.pageToLoad }) { page in      // starts when the query appears, cancels when it changes
            .run { send in send(.loaded(try await api.page(page))) }
        }.labeled("page loader"),                           // names it in logs and test failures
        .events(scrollView.nearBottom.map { _ in .nearBottom }),
    ],
    backend: .actor                                         // or .callback: same guarantees
)
loop.send(.nearBottom)                                      // any thread; returns at once
for await state in loop.states {                            // current state first, then every one
    render(state)
    if state.titles.count == 60 { break }                   // `states` ends only when the loop stops
}
await loop.stop()                                           // cancels every effect, returns when all ended
// snippet.hide

// Stand-ins for a movie service and a scroll view, so that the snippet runs as it is. (Enums with
// static members rather than global instances: top-level globals belong to the main actor, and
// effects run elsewhere.)
enum api {
    static func page(_ number: Int) async throws -> [String] {
        (1...20).map { "Movie \((number - 1) * 20 + $0)" }
    }
}

enum scrollView {
    private static let scrolls = AsyncStream<Void>.makeStream()
    static var nearBottom: AsyncStream<Void> { scrolls.stream }
    static func userScrollsToBottom() { scrolls.continuation.yield() }
}

/// Shows the state; once a page is in, the user scrolls to the bottom of it.
func render(_ state: Movies) {
    print("\(state.titles.count) titles" + (state.pageToLoad.map { ", loading page \($0)" } ?? ""))
    if state.pageToLoad == nil { scrollView.userScrollsToBottom() }
}
