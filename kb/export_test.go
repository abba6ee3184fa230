package kb

// ReadTree is readTree, for the external tests that break one table of the built-in tree.
var ReadTree = readTree
