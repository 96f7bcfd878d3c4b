import FeedbackExamples
import Foundation
import Hummingbird
import NIOCore

/// What a client may ask of its pharmacies screen: the user's actions and the map's answer — never
/// the service's answers, which only the session's own effects send.
///
/// JSON, discriminated by `type`:
///
/// ```json
/// {"type": "addPharmacy"}
/// {"type": "pickPlace", "reference": "superdrug-strand"}
/// {"type": "closeMap"}
/// {"type": "deletePharmacy", "index": 0}
/// {"type": "select", "index": 0, "selection": "dismiss"}      // or "showDirections"
/// {"type": "retry"}
/// {"type": "cancel"}
/// ```
public enum ClientEvent: Hashable, Sendable, Codable {
    case addPharmacy
    /// Picks the map place with this reference (see ``PharmacyServer/Configuration/mapPlaces``).
    case pickPlace(reference: String)
    /// Closes the map without picking.
    case closeMap
    case deletePharmacy(index: Int)
    case select(index: Int, selection: Pharmacies.Action.Selection)
    case retry
    case cancel

    private enum Kind: String, Codable, CaseIterable {
        case addPharmacy, pickPlace, closeMap, deletePharmacy, select, retry, cancel
    }

    private enum CodingKeys: String, CodingKey {
        case type, reference, index, selection
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .type)
        guard let kind = Kind(rawValue: name) else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription: "unknown type '\(name)'; expected one of "
                    + Kind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        switch kind {
        case .addPharmacy: self = .addPharmacy
        case .pickPlace: self = .pickPlace(reference: try container.decode(String.self, forKey: .reference))
        case .closeMap: self = .closeMap
        case .deletePharmacy: self = .deletePharmacy(index: try Self.index(in: container))
        case .select:
            self = .select(
                index: try Self.index(in: container),
                selection: try container.decode(Pharmacies.Action.Selection.self, forKey: .selection))
        case .retry: self = .retry
        case .cancel: self = .cancel
        }
    }

    /// The largest `index` a request may name.
    public static let maximumIndex = 1_000_000

    private static func index(in container: KeyedDecodingContainer<CodingKeys>) throws -> Int {
        // Read as a Double (exact for every integer in range) so that 1.5 or 1e30 get this
        // message rather than a decoder's complaint about the document.
        let index = try container.decode(Double.self, forKey: .index)
        guard index.rounded() == index, (0...Double(maximumIndex)).contains(index) else {
            throw DecodingError.dataCorruptedError(
                forKey: .index, in: container, debugDescription: "must be an integer from 0 to \(maximumIndex)")
        }
        return Int(index)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .addPharmacy:
            try container.encode(Kind.addPharmacy, forKey: .type)
        case .pickPlace(let reference):
            try container.encode(Kind.pickPlace, forKey: .type)
            try container.encode(reference, forKey: .reference)
        case .closeMap:
            try container.encode(Kind.closeMap, forKey: .type)
        case .deletePharmacy(let index):
            try container.encode(Kind.deletePharmacy, forKey: .type)
            try container.encode(index, forKey: .index)
        case .select(let index, let selection):
            try container.encode(Kind.select, forKey: .type)
            try container.encode(index, forKey: .index)
            try container.encode(selection, forKey: .selection)
        case .retry:
            try container.encode(Kind.retry, forKey: .type)
        case .cancel:
            try container.encode(Kind.cancel, forKey: .type)
        }
    }

    /// The screen's event for this request, or `nil` when it names a map place that does not
    /// exist.
    func event(mapPlaces: [Place]) -> Pharmacies.Event? {
        switch self {
        case .addPharmacy: .ui(.addPharmacy)
        case .pickPlace(let reference): mapPlaces.first { $0.reference == reference }.map { .didSelectPlace(.selected($0)) }
        case .closeMap: .didSelectPlace(.cancelled)
        case .deletePharmacy(let index): .ui(.deletePharmacy(index))
        case .select(let index, let selection): .ui(.select(index, selection))
        case .retry: .ui(.retry)
        case .cancel: .ui(.cancel)
        }
    }
}

extension ClientEvent {
    /// The event in a request's body, or the ``APIError`` that says what is wrong with it:
    /// `unsupported_media_type`, `body_too_large`, `invalid_json` or `invalid_event`.
    static func decode(_ request: Request, maximumBodySize: Int) async throws -> ClientEvent {
        try await decodeNumbered(request, maximumBodySize: maximumBodySize).event
    }

    /// The client's own number for a request: the optional `request` field of an event's body,
    /// an integer from 0 to 2^53. A journaled session counts the requests it applied and keeps
    /// the latest number (see ``SessionState``). Read here for its type only; its value is read
    /// from its literal, exactly.
    private struct Number: Decodable {
        var request: Double?
    }

    /// The largest `request` number: every integer up to it is exact in any JSON reader's double.
    static let maximumRequestNumber = 9_007_199_254_740_992

    /// The event in a request's body and its `request` number, if any; see
    /// ``decode(_:maximumBodySize:)``.
    static func decodeNumbered(_ request: Request, maximumBodySize: Int) async throws -> (event: ClientEvent, number: Int?) {
        let mediaType = request.headers[.contentType]?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/json" else { throw APIError.unsupportedMediaType }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maximumBodySize {
            throw APIError.bodyTooLarge(limit: maximumBodySize)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maximumBodySize)
        } catch is NIOTooManyBytesError {
            throw APIError.bodyTooLarge(limit: maximumBodySize)
        }
        // Syntax first (a decoder reports some well-formed documents that do not fit the type
        // as "not valid JSON"), then what the decoder would let through: a key given twice, and
        // integers that a double cannot hold exactly.
        let numbers: [String: String]
        do {
            numbers = try StrictJSON.topLevelNumbers(in: Array(body.readableBytesView))
        } catch .syntax(let what, let offset) {
            throw APIError.invalidJSON("\(what) at byte \(offset)")
        } catch let duplicate {
            throw APIError.invalidEvent("\(duplicate)")
        }
        let data = Data(buffer: body)
        let event: ClientEvent
        let number: Double?
        do {
            event = try JSONDecoder().decode(ClientEvent.self, from: data)
            number = try JSONDecoder().decode(Number.self, from: data).request
        } catch let error as DecodingError {
            throw Self.apiError(for: error)
        }
        switch event {
        case .deletePharmacy, .select:
            // In range (the decoder checked), but written as an integer?
            if let index = numbers["index"], !StrictJSON.isIntegerLiteral(index) {
                throw APIError.invalidEvent("'index' must be an integer from 0 to \(maximumIndex)")
            }
        case .addPharmacy, .pickPlace, .closeMap, .retry, .cancel:
            break
        }
        guard number != nil else { return (event, nil) }
        guard let literal = numbers["request"], StrictJSON.isIntegerLiteral(literal), let exact = Int(literal),
            (0...maximumRequestNumber).contains(exact)
        else {
            throw APIError.invalidEvent("'request' must be an integer from 0 to \(maximumRequestNumber)")
        }
        return (event, exact)
    }

    /// What is wrong with a well-formed document that is not an event, naming the field.
    static func apiError(for error: DecodingError) -> APIError {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return .invalidEvent("not an event: \(context.debugDescription)")
        case .dataCorrupted(let context):
            return .invalidEvent("'\(path(context))': \(context.debugDescription)")
        case .keyNotFound(let key, let context):
            let field = (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
            return .invalidEvent("missing field '\(field)'")
        case .typeMismatch(let type, let context):
            let field = path(context)
            let expected = type == String.self ? "a string" : type == Double.self ? "a number" : "\(type)"
            return field.isEmpty
                ? .invalidEvent("an event is a JSON object with a 'type'")
                : .invalidEvent("'\(field)' must be \(expected)")
        case .valueNotFound(_, let context):
            return .invalidEvent("'\(path(context))' must not be null")
        @unknown default:
            return .invalidEvent("not an event")
        }
    }
}
