package inventory

import (
	jsonv2 "github.com/go-json-experiment/json"
)

// decodeAccepted decodes a document the fast acceptor accepted with json/v2, which takes
// about two thirds of encoding/json's time on a large inventory. On such a document the two
// give the same Document (checkSlowPathAgreement, in the differential tests and FuzzParse,
// holds them to reflect.DeepEqual), because the acceptor leaves out everything they treat
// differently:
//
//   - names: every object decoded into a struct is closed (additionalProperties: false) to
//     the names its fields are tagged with (TestEverySchemaPropertyNamesAGoFieldExactly), so
//     encoding/json's case-insensitive match never finds what v2's exact one would not;
//   - duplicate names and invalid UTF-8, which the acceptor refuses;
//   - null, which the schema allows nowhere;
//   - numbers other than plainly written integers within an int64, which it refuses;
//   - time.Time, which both read with the time package's RFC 3339 parser; v2 then refuses
//     a few strings that parser lets through, and a v2 error falls back below. An escaped
//     timestamp, which encoding/json passes to the parser still escaped and so refuses, the
//     acceptor leaves to the slow path (every time.Time is a formatted string:
//     TestEverySchemaPropertyNamesAGoFieldExactly).
//
// Any v2 error leaves the decoding, and the wording of its error, to encoding/json.
func decodeAccepted(data []byte) (*Document, error) {
	var d Document
	if err := jsonv2.Unmarshal(data, &d); err == nil {
		return &d, nil
	}
	return decodeV1(data)
}

// DecodeStored decodes a document Parse accepted before, such as a fleet server's stored
// snapshot, without checking it again: json/v2, falling back to encoding/json on any v2
// error, as Parse decodes. On a document Parse accepts it gives Parse's Document
// (checkSlowPathAgreement holds it to that), the acceptor's pass saved; anything else it
// decodes without a schema's verdict, so never give it a document from outside.
func DecodeStored(data []byte) (*Document, error) {
	return decodeAccepted(data)
}
