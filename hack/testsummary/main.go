// Command testsummary reads `go test -json` on stdin and prints what `go test` prints without
// -json (each package's result line, the output of failing tests in -v order, build errors),
// then how many tests were skipped and why: `make test` without API servers skips the integration
// tests, and says so. It exits 1 when a build or a test failed.
//
//	set -o pipefail; go test -json ./... | go run ./hack/testsummary
package main

import (
	"fmt"
	"os"
)

func main() {
	s := newSummary(os.Stdout)
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if s.finish() {
		os.Exit(1)
	}
}
