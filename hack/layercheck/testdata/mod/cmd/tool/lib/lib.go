// Package lib is library code left under cmd/.
package lib

// F does nothing.
func F() {}
