package output

// Escape is s as a terminal may be shown it: every control character, line breaks and tabs
// included, written as an escape (\x1b, \u009b, \x0a), as the table format writes every value
// from a manifest or a cluster. A command printing what a server, an agent or a manifest
// wrote escapes it with this, so none of it can drive the terminal, clear it, or break the
// line or the table row it is printed in.
func Escape(s string) string { return esc(s) }
