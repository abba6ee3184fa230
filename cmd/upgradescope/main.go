// Command upgradescope tells what breaks when a Kubernetes cluster moves to the next minor.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr})) }
