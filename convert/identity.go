package convert

// identical is the step for a pair whose versions have the same fields and defaults: only
// apiVersion changes (Object sets it).
func identical(*State) {}
