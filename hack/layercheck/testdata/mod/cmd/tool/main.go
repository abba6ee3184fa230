package main

import "example.com/layers/cmd/tool/lib"

func main() { lib.F() }
