#if Postgres
import Foundation
import Instrumentation

/// A sender's `ServiceContext` as an inbox entry stores it: the headers an instrument injects
/// (a tracer's W3C `traceparent` and `tracestate`), as a JSON object of strings, in the column
/// `trace_headers`. The instrument decides what crosses nodes; the inbox only carries it.
enum InboxHeaders {
    /// The headers of `context`, or `nil` when there is no context or the instrument injects
    /// nothing (the no-op instrument, a context with nothing to carry).
    static func inject(_ context: ServiceContext?, with instrument: any Instrument) -> String? {
        guard let context else { return nil }
        var headers: [String: String] = [:]
        instrument.inject(context, into: &headers, using: HeaderInjector())
        guard !headers.isEmpty, let json = try? JSONEncoder().encode(headers) else { return nil }
        return String(decoding: json, as: UTF8.self)
    }

    /// What an entry's stored headers hold.
    enum Extracted {
        /// No headers were stored: the event is relayed in no context.
        case none
        case context(ServiceContext)
        /// The column holds something that is not a JSON object of strings (another tool wrote
        /// it): the event is still relayed, in no context, and the relay says so.
        case unreadable(String)
    }

    static func extract(_ stored: String?, with instrument: any Instrument) -> Extracted {
        guard let stored else { return .none }
        guard let headers = try? JSONDecoder().decode([String: String].self, from: Data(stored.utf8)) else {
            return .unreadable(String(stored.prefix(80)))
        }
        var context = ServiceContext.topLevel
        instrument.extract(headers, into: &context, using: HeaderExtractor())
        return .context(context)
    }
}

struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

struct HeaderExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
#endif
