import FeedbackExamples
import FeedbackLoop
import Testing

@Suite("Movie paging: the README's states, the near-bottom source, failures and retry")
struct MoviePagingTests {
    typealias State = MoviePaging.State

    static let page1 = Results(page: 1, totalResults: 12, totalPages: 3, results: [Movie(id: 1, title: "Alien")])
    static let page3 = Results(page: 3, totalResults: 12, totalPages: 3, results: [Movie(id: 12, title: "Laura")])
    static let loadedFirst = MoviePaging.Context(batch: page1, movies: page1.results)
    static let loadedAll = MoviePaging.Context(batch: page3, movies: page1.results + page3.results)
    static let offline = PagingError(message: "offline")

    // MARK: The reducer

    @Test("the near-bottom signal starts paging, unless paging, failed or at the end")
    func startLoading() {
        var state = State.initial
        MoviePaging.reduce(&state, .startLoadingNextPage)
        #expect(state == .paging(context: .empty))
        #expect(state.nextPage == 1)

        for ignoring in [
            State.paging(context: Self.loadedFirst), .retry(context: Self.loadedFirst),
            .error(error: Self.offline, context: Self.loadedFirst), .loadedPage(context: Self.loadedAll),
        ] {
            var state = ignoring
            MoviePaging.reduce(&state, .startLoadingNextPage)
            #expect(state == ignoring)
        }

        state = .loadedPage(context: Self.loadedFirst)
        MoviePaging.reduce(&state, .startLoadingNextPage)
        #expect(state == .paging(context: Self.loadedFirst))
        #expect(state.nextPage == 2)
        #expect(state.retryPage == nil)
    }

    @Test("a response appends the page's movies")
    func response() {
        var state = State.paging(context: .empty)
        MoviePaging.reduce(&state, .response(Self.page1))
        #expect(state == .loadedPage(context: Self.loadedFirst))
        #expect(!state.isPaging)
    }

    @Test("a failure waits for retry, and retry asks for the same page again")
    func failureAndRetry() {
        var state = State.paging(context: Self.loadedFirst)
        MoviePaging.reduce(&state, .failed(Self.offline))
        #expect(state == .error(error: Self.offline, context: Self.loadedFirst))
        #expect(state.lastError == Self.offline)
        #expect(!state.isPaging)
        MoviePaging.reduce(&state, .retry)
        #expect(state == .retry(context: Self.loadedFirst))
        #expect(state.retryPage == 2)
        #expect(state.nextPage == nil)
        MoviePaging.reduce(&state, .failed(Self.offline))
        #expect(state == .error(error: Self.offline, context: Self.loadedFirst))
    }

    @Test("retry, responses and failures are ignored where they make no sense")
    func ignored() {
        for (initial, event) in [
            (State.initial, MoviePaging.Event.retry), (.loadedPage(context: Self.loadedFirst), .retry),
            (.initial, .response(Self.page1)), (.loadedPage(context: Self.loadedFirst), .failed(Self.offline)),
            (.error(error: Self.offline, context: Self.loadedFirst), .response(Self.page1)),
        ] {
            var state = initial
            MoviePaging.reduce(&state, event)
            #expect(state == initial, "\(event) in \(initial)")
        }
    }

    // MARK: On a loop

    struct List {
        let loop: Loop<State, MoviePaging.Event>
        let recorder = Recorder<State, MoviePaging.Event>()
        let api: FakeMoviesAPI
        let scroll: AsyncStream<Void>.Continuation

        init(_ backend: Backend, api: FakeMoviesAPI) {
            let (nearBottom, scroll) = AsyncStream.makeStream(of: Void.self)
            self.api = api
            self.scroll = scroll
            self.loop = MoviePaging.makeLoop(
                environment: .init(api: api, nearBottom: nearBottom), backend: backend,
                instrumentation: recorder.instrumentation)
        }

        /// Scrolls near the bottom and waits until the loop reduced the signal and the
        /// `expected` transitions after it.
        func scrollNearBottom(expectingTransitions expected: Int) async throws {
            let before = recorder.count
            scroll.yield()
            try await recorder.waitForTransitions(before + expected)
        }

        /// The latest state reduced. `loop.state` is published only when a batch ends, so right
        /// after the recorder saw a transition it may still show the state before.
        var state: State { recorder.last ?? loop.state }
        var pages: Int { state.context.batch.page }
        var titles: [String] { state.context.movies.map(\.title) }
    }

    @Test("each near-bottom signal loads the next page until the last", arguments: Backend.allCases)
    func pagesUntilTheEnd(_ backend: Backend) async throws {
        let list = List(backend, api: FakeMoviesAPI(totalMovies: 12, pageSize: 5))
        #expect(list.loop.state == .initial)
        for page in 1...3 {
            try await list.scrollNearBottom(expectingTransitions: 2)
            #expect(list.recorder.states.suffix(2).map(\.isPaging) == [true, false])
            #expect(list.pages == page)
        }
        #expect(list.state.context.movies.map(\.id) == Array(1...12))
        #expect(!list.state.context.hasMorePages)

        try await list.scrollNearBottom(expectingTransitions: 1)
        #expect(list.recorder.states.suffix(2).allSatisfy { $0 == list.state }, "the end of the list ignores the signal")
        #expect(list.api.server.started == [.page(1), .page(2), .page(3)])
        await list.loop.stop()
        #expect(list.loop.statistics.effectsRunning == 0)
    }

    @Test("a failed page waits for retry, ignoring the near-bottom signal, then loads again", arguments: Backend.allCases)
    func failureAndRetryOnALoop(_ backend: Backend) async throws {
        let list = List(backend, api: FakeMoviesAPI(totalMovies: 12, pageSize: 5, failing: [.page(2): 1]))
        try await list.scrollNearBottom(expectingTransitions: 2)
        try await list.scrollNearBottom(expectingTransitions: 2)
        #expect(list.state.lastError == PagingError(FakeServiceError(operation: "page 2")))
        #expect(list.titles.count == 5, "the first page stays")

        try await list.scrollNearBottom(expectingTransitions: 1)
        #expect(list.state.lastError != nil, "scrolling does not retry")

        let before = list.recorder.count
        try await list.loop.sendAndWait(.retry)
        try await list.recorder.waitForTransitions(before + 2)
        #expect(list.state == .loadedPage(context: list.state.context))
        #expect(list.pages == 2)
        #expect(list.state.context.movies.map(\.id) == Array(1...10))
        #expect(
            list.api.server.calls == [
                FakeCall(operation: .page(1), outcome: .succeeded), FakeCall(operation: .page(2), outcome: .failed),
                FakeCall(operation: .page(2), outcome: .succeeded),
            ])
        await list.loop.stop()
    }

    @Test("near-bottom signals while a page loads do not start another request", arguments: Backend.allCases)
    func noDoubleLoading(_ backend: Backend) async throws {
        let clock = SleepCountingClock()
        let list = List(backend, api: FakeMoviesAPI(latency: .milliseconds(300), clock: clock))
        try await list.scrollNearBottom(expectingTransitions: 1)
        try await clock.waitForSleeps(started: 1)
        try await list.scrollNearBottom(expectingTransitions: 1)
        try await list.scrollNearBottom(expectingTransitions: 1)
        #expect(list.state == .paging(context: .empty))
        #expect(list.api.server.started == [.page(1)])

        let before = list.recorder.count
        await clock.advance(by: .milliseconds(300))
        try await list.recorder.waitForTransitions(before + 1)
        #expect(list.pages == 1)
        await list.loop.stop()
    }

    @Test("stopping the loop ends the near-bottom source and a request in flight", arguments: Backend.allCases)
    func stopCancelsEverything(_ backend: Backend) async throws {
        let clock = SleepCountingClock()
        let list = List(backend, api: FakeMoviesAPI(latency: .seconds(1), clock: clock))
        try await list.scrollNearBottom(expectingTransitions: 1)
        try await clock.waitForSleeps(started: 1)
        await list.loop.stop()
        #expect(list.loop.statistics.effectsRunning == 0)
        #expect(list.api.server.calls == [FakeCall(operation: .page(1), outcome: .cancelled)])
    }
}
