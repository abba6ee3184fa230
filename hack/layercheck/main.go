// Command layercheck enforces the layer rules `make vet` runs (issue 31): the packages that
// read reports, the wire formats, the store and the knowledge base link no OPA; no package
// outside cmd/ imports one under cmd/; no type in fleet/server's packages, the store's
// backend aside, has more than 25 methods. It prints one line per violation, with the
// file and line to look at, and exits 1 when there is one.
//
//	go run ./hack/layercheck          # from the module root
//
// A listed package the module does not have is a violation, so a renamed or mistyped path
// cannot turn its rule off.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

func main() {
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "layercheck:", err)
		os.Exit(2)
	}
	n, err := run(context.Background(), dir, upgradescopeRules, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "layercheck:", err)
		os.Exit(2)
	}
	if n > 0 {
		os.Exit(1)
	}
}

// run checks the module rooted at dir against rules, printing the violations to w, and
// answers how many it found.
func run(ctx context.Context, dir string, r rules, w io.Writer) (int, error) {
	mod, err := loadModule(ctx, dir)
	if err != nil {
		return 0, err
	}
	var found []violation
	for _, check := range []func(*module, rules) ([]violation, error){checkNoOPA, checkNoCmdImports, checkMethodCounts} {
		v, err := check(mod, r)
		if err != nil {
			return 0, err
		}
		found = append(found, v...)
	}
	for _, v := range found {
		fmt.Fprintln(w, v)
	}
	return len(found), nil
}
