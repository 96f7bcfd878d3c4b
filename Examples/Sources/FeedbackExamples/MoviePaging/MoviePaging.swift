import FeedbackLoop

/// The movie list of the ReactiveFeedback README: pages load one after another as the user
/// scrolls near the bottom, a failed page waits for the user to retry, and a retry loads the page
/// that failed.
///
/// The "near bottom" signal is an event source from outside the loop (a scroll view, here an
/// `AsyncStream`); the reducer ignores it while a page is loading, after a failure and after the
/// last page, which is the README's `Feedback(predicate: { !$0.paging })`.
public enum MoviePaging: ExampleFeature {
    /// What the feedbacks need.
    public struct Environment: Sendable {
        public var api: any MoviesAPI
        /// Yields whenever the list is scrolled near its bottom. Iterated once, for the life of
        /// the loop.
        public var nearBottom: AsyncStream<Void>

        public init(api: any MoviesAPI, nearBottom: AsyncStream<Void>) {
            self.api = api
            self.nearBottom = nearBottom
        }
    }

    /// Nothing loaded; the first near-bottom signal (an empty list is at its bottom) loads page 1.
    public static var initialState: State { .initial }

    /// The movies loaded so far and the last page that arrived — the README's `Context`.
    public struct Context: Hashable, Sendable, Codable {
        public var batch: Results<Movie>
        public var movies: [Movie]

        public init(batch: Results<Movie>, movies: [Movie]) {
            self.batch = batch
            self.movies = movies
        }

        public static var empty: Context { Context(batch: .empty, movies: []) }

        /// Whether a page follows the last one loaded (true before the first page).
        public var hasMorePages: Bool { batch.page == 0 || batch.page < batch.totalPages }
    }

    /// The README's states.
    ///
    /// The README also lists `refreshing` and `refreshed`, but none of its events reaches them;
    /// they are left out rather than kept unreachable.
    public enum State: Hashable, Sendable, Codable, CustomStringConvertible {
        case initial
        /// Loading the page after `context.batch`.
        case paging(context: Context)
        case loadedPage(context: Context)
        /// Loading a page failed; waiting for the user to retry.
        case error(error: PagingError, context: Context)
        /// Loading again the page that failed.
        case retry(context: Context)

        /// The movies loaded so far, whatever the state.
        public var context: Context {
            switch self {
            case .initial: .empty
            case .paging(let context), .loadedPage(let context), .error(_, let context), .retry(let context): context
            }
        }

        /// The page to load because the user scrolled, if any.
        public var nextPage: Int? {
            if case .paging(let context) = self { context.batch.page + 1 } else { nil }
        }

        /// The page to load again because the user asked to retry, if any.
        public var retryPage: Int? {
            if case .retry(let context) = self { context.batch.page + 1 } else { nil }
        }

        /// The failure waiting for a retry, if any.
        public var lastError: PagingError? {
            if case .error(let error, _) = self { error } else { nil }
        }

        /// Whether a page is being loaded.
        public var isPaging: Bool { nextPage != nil || retryPage != nil }

        public var description: String {
            let context = self.context
            let list = "\(context.movies.count) movies, \(context.batch.page) of \(context.batch.totalPages) pages"
            switch self {
            case .initial: return "initial: no movies yet"
            case .paging: return "paging: loading page \(context.batch.page + 1) (\(list))"
            case .loadedPage where !context.hasMorePages: return "loadedPage: \(list), the end of the list"
            case .loadedPage: return "loadedPage: \(list)"
            case .error(let error, _): return "error: page \(context.batch.page + 1) failed: \(error) (\(list))"
            case .retry: return "retry: loading page \(context.batch.page + 1) again (\(list))"
            }
        }
    }

    /// The README's events.
    public enum Event: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The list was scrolled near its bottom.
        case startLoadingNextPage
        case response(Results<Movie>)
        case failed(PagingError)
        /// The user asked to load the failed page again.
        case retry

        public var description: String {
            switch self {
            case .startLoadingNextPage: "near bottom: start loading the next page"
            case .response(let batch): "response: page \(batch.page) with \(batch.results.count) movies"
            case .failed(let error): "failed: \(error)"
            case .retry: "user: retry"
            }
        }
    }

    /// The README's reducer, with the guards its feedback predicates implied: near-bottom signals
    /// start paging only from `initial` or `loadedPage` while pages remain, responses and failures
    /// count only while a page loads, and retry only after a failure.
    public static func reduce(_ state: inout State, _ event: Event) {
        switch (state, event) {
        case (.initial, .startLoadingNextPage), (.loadedPage, .startLoadingNextPage):
            if state.context.hasMorePages { state = .paging(context: state.context) }
        case (.paging(var context), .response(let batch)), (.retry(var context), .response(let batch)):
            context.batch = batch
            context.movies += batch.results
            state = .loadedPage(context: context)
        case (.paging(let context), .failed(let error)), (.retry(let context), .failed(let error)):
            state = .error(error: error, context: context)
        case (.error(_, let context), .retry):
            state = .retry(context: context)
        default:
            break
        }
    }

    /// The README's three feedbacks: near-bottom signals become `startLoadingNextPage`, and a
    /// page loads while `nextPage` or `retryPage` asks for it.
    public static func feedbacks(_ environment: Environment) -> [Feedback<State, Event>] {
        let api = environment.api
        return [
            .events(environment.nearBottom.map { _ in Event.startLoadingNextPage }),
            .skippingRepeated({ $0.nextPage }) { page in load(page, from: api) },
            .skippingRepeated({ $0.retryPage }) { page in load(page, from: api) },
        ]
    }

    private static func load(_ page: Int, from api: any MoviesAPI) -> Effect<Event> {
        .run { send in
            do {
                send(.response(try await api.movies(page: page)))
            } catch {
                send(.failed(PagingError(error)))
            }
        }
    }
}
