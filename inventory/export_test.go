package inventory

import "testing"

// Exported for the differential tests of inventory_test, which use hack/corpus (it imports
// this package, so they cannot live inside it).
var (
	AcceptFast             = acceptFast
	CheckSlowPathAgreement = checkSlowPathAgreement
	FullDocument           = fullDocument
)

// Compile-time check that the helper fits both tests and fuzz targets.
var _ func(testing.TB, []byte) bool = checkSlowPathAgreement
