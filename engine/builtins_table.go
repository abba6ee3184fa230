package engine

import "github.com/open-policy-agent/opa/v1/ast"

// sizedBuiltins are the builtins of OPA v1 whose one call can build far more than its
// operands hold, each with what it builds. The rest of OPA's builtins were read and left
// alone, for one of these reasons:
//
//   - they build at most a few times what their operands hold, which the guard's sampling
//     absorbs: base64, hex and urlquery.encode, upper, lower, trim*, substring,
//     strings.reverse, sort, the set operations, object.filter, object.remove, object.keys,
//     json.filter, cast_*, array.slice and array.reverse, the crypto hashes and HMACs;
//   - OPA interrupts them itself when the context is cancelled, between the elements it
//     adds: numbers.range, numbers.range_step; or they hand out one element at a time to
//     the rest of the rule, which the guard interrupts: walk;
//   - their result is bounded by OPA's own limit on numbers (a binary exponent of 100,000):
//     format_int, units.parse, units.parse_bytes, the arithmetic; bits.lsh, the one that
//     is not, is bounded in init;
//   - json.patch edits a lazy tree that shares what it copies; the copy is paid only by a
//     builtin that writes it out, and those are sized here;
//   - strings.render_template runs loops its template and data choose, in one call no
//     bound can size: the engine refuses it (refusedBuiltins).
var sizedBuiltins = map[string]sizeFunc{
	// Text built from a string, a separator or a format repeated.
	ast.Concat.Name:                 concatSize,
	ast.Replace.Name:                replaceSize,
	ast.ReplaceN.Name:               replaceNSize,
	ast.RegexReplace.Name:           regexReplaceSize,
	ast.Sprintf.Name:                sprintfSize,
	ast.InternalTemplateString.Name: templateStringSize,
	ast.InternalPrint.Name:          printSize,

	// Text written out of a value: a value may hold another many times, or 2⁴⁰ times in 40
	// rules of a few bytes each, and the text holds every copy.
	ast.JSONMarshal.Name:            marshalSize(jsonNodeBytes),
	ast.JSONMarshalWithOptions.Name: marshalWithOptionsSize,
	ast.YAMLMarshal.Name:            yamlMarshalSize,
	ast.URLQueryEncodeObject.Name:   marshalSize(jsonNodeBytes),
	ast.JWTEncodeSign.Name:          marshalSize(jsonNodeBytes),
	ast.JSONMatchSchema.Name:        schemaSize,
	ast.JSONSchemaVerify.Name:       schemaSize,

	// Values decoded from text: tens to thousands of bytes per byte of it.
	ast.JSONUnmarshal.Name:                        jsonUnmarshalSize,
	ast.YAMLUnmarshal.Name:                        yamlUnmarshalSize,
	ast.YAMLIsValid.Name:                          yamlUnmarshalSize,
	ast.RegoParseModule.Name:                      parsedSize(moduleByteBytes),
	ast.GraphQLParse.Name:                         parsedSize(graphqlByteBytes),
	ast.GraphQLParseAndVerify.Name:                parsedSize(graphqlByteBytes),
	ast.GraphQLParseQuery.Name:                    parsedSize(graphqlByteBytes),
	ast.GraphQLParseSchema.Name:                   parsedSize(graphqlByteBytes),
	ast.GraphQLIsValid.Name:                       parsedSize(graphqlByteBytes),
	ast.GraphQLSchemaIsValid.Name:                 parsedSize(graphqlByteBytes),
	ast.CryptoX509ParseCertificates.Name:          parsedSize(certByteBytes),
	ast.CryptoX509ParseAndVerifyCertificates.Name: parsedSize(certByteBytes),
	ast.CryptoX509ParseCertificateRequest.Name:    parsedSize(certByteBytes),
	ast.CryptoX509ParseKeyPair.Name:               parsedSize(certByteBytes),
	ast.CryptoX509ParseRSAPrivateKey.Name:         parsedSize(certByteBytes),
	ast.CryptoParsePrivateKeys.Name:               parsedSize(certByteBytes),
	ast.JWTDecode.Name:                            parsedSize(certByteBytes),
	ast.JWTDecodeVerify.Name:                      parsedSize(certByteBytes),

	// Collections of one element per match, piece or pair.
	ast.Split.Name:                      splitSize,
	ast.SplitN.Name:                     splitNSize,
	ast.IndexOfN.Name:                   indexOfNSize,
	ast.RegexSplit.Name:                 regexListSize(regexSplit),
	ast.RegexFind.Name:                  regexListSize(regexFind),
	ast.RegexFindAllStringSubmatch.Name: regexListSize(regexSubmatches),
	ast.ArrayConcat.Name:                arrayConcatSize,
	ast.ArrayFlatten.Name:               arrayFlattenSize,
	ast.NetCIDRContainsMatches.Name:     cidrMatchesSize,
	ast.ReachablePathsBuiltin.Name:      reachablePathsSize,

	// Objects copied whole or merged level by level.
	ast.ObjectUnion.Name:  objectUnionSize,
	ast.ObjectUnionN.Name: objectUnionNSize,
	ast.JSONRemove.Name:   jsonRemoveSize,
}
