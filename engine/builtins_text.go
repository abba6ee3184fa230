package engine

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
)

// What a builtin allocates for each byte of the string it builds (measured, as
// TestSizesFollowWhatTheBuiltinsAllocate checks).
const (
	bufferCopies  = 2 // a buffer sized first, then copied out (concat); a value's text
	replaceCopies = 4 // a buffer grown by doubling, then copied out (replace, strings.replace_n)
	regexCopies   = 8 // as replace, and each match's expansion on its own (regex.replace)
	formatCopies  = 8 // fmt's buffer grown by doubling, copied out, and the arguments' text (sprintf)
)

// concat(delimiter, strings): the strings and a delimiter between each two.
func concatSize(operands []*ast.Term, _ int64) int64 {
	delim, ok := operands[0].Value.(ast.String)
	if !ok {
		return 0
	}
	n, total := int64(0), int64(0)
	each(operands[1].Value, func(t *ast.Term) bool {
		if s, ok := t.Value.(ast.String); ok {
			total += int64(len(s))
		}
		n++
		return true
	})
	if n > 1 {
		total += (n - 1) * int64(len(delim))
	}
	return bufferCopies * total
}

// replace(s, old, new): s with new in place of each old. OPA replaces with a
// strings.Replacer, for which an empty old matches before every byte and after the last.
func replaceSize(operands []*ast.Term, _ int64) int64 {
	s, ok1 := operands[0].Value.(ast.String)
	old, ok2 := operands[1].Value.(ast.String)
	repl, ok3 := operands[2].Value.(ast.String)
	if !ok1 || !ok2 || !ok3 {
		return 0
	}
	size := int64(len(s))
	switch {
	case len(repl) <= len(old):
	case old == "":
		size += int64(len(s)+1) * int64(len(repl))
	default:
		size += int64(strings.Count(string(s), string(old))) * int64(len(repl)-len(old))
	}
	return replaceCopies * size
}

// strings.replace_n(patterns, s): bounded from above first, and only when that bound is past
// the budget counted by running the replacement OPA runs into a counter.
func replaceNSize(operands []*ast.Term, budget int64) int64 {
	patterns, ok1 := operands[0].Value.(ast.Object)
	s, ok2 := operands[1].Value.(ast.String)
	if !ok1 || !ok2 {
		return 0
	}
	keys := patterns.Keys()
	sort.Slice(keys, func(i, j int) bool { return keys[i].Value.Compare(keys[j].Value) < 0 })
	pairs := make([]string, 0, 2*len(keys))
	longest := 0
	for _, k := range keys {
		old, ok1 := k.Value.(ast.String)
		repl, ok2 := patterns.Get(k).Value.(ast.String)
		if !ok1 || !ok2 {
			return 0
		}
		pairs = append(pairs, string(old), string(repl))
		longest = max(longest, len(repl))
	}
	if bound := int64(len(s)) + int64(len(s)+1)*int64(longest); replaceCopies*bound <= budget {
		return replaceCopies * bound
	}
	var n counter
	_, _ = strings.NewReplacer(pairs...).WriteString(&n, string(s))
	return replaceCopies * int64(n)
}

// counter counts what is written to it.
type counter int64

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

func (c *counter) WriteString(s string) (int, error) { *c += counter(len(s)); return len(s), nil }

// regex.replace(s, pattern, value): each match becomes value with its $ references expanded,
// each at most the match. OPA also keeps every match's submatch indexes at once.
func regexReplaceSize(operands []*ast.Term, budget int64) int64 {
	s, ok1 := operands[0].Value.(ast.String)
	pattern, ok2 := operands[1].Value.(ast.String)
	value, ok3 := operands[2].Value.(ast.String)
	if !ok1 || !ok2 || !ok3 {
		return 0
	}
	refs := int64(strings.Count(string(value), "$"))
	matches := int64(len(s) + 1)
	// Saturating: a value of a million "$0" over a 2 MB string passes 2^63 here.
	perMatch := saturatingAdd(int64(len(value))+indexBytes*int64(len(pattern)+1), saturatingMul(refs, int64(len(s))))
	if bound := saturatingMul(regexCopies, saturatingAdd(int64(len(s)), saturatingMul(matches, perMatch))); bound <= budget {
		return bound
	}
	re, err := regexp.Compile(string(pattern))
	if err != nil {
		return 0
	}
	indexes := indexBytes * int64(re.NumSubexp()+1)
	size, n := int64(len(s)), int64(1)
	total := func() int64 { return regexCopies*size + n*indexes }
	eachMatch(re, string(s), func(m string) bool {
		size += int64(len(value)) + refs*int64(len(m)) - int64(len(m))
		n++
		return total() <= budget
	})
	return total()
}

// indexBytes is what one match's pair of submatch indexes costs.
const indexBytes = 16

// sprintf(format, args): the format's text, and each directive's argument written as its
// verb writes it, padded to its width, with its precision's digits.
func sprintfSize(operands []*ast.Term, budget int64) int64 {
	format, ok1 := operands[0].Value.(ast.String)
	args, ok2 := operands[1].Value.(*ast.Array)
	if !ok1 || !ok2 {
		return 0
	}
	size := int64(len(format))
	var used argSet
	eachDirective(string(format), func(d directive) bool {
		if d.arg < 0 || d.arg >= args.Len() {
			size += int64(len(d.flags)) + 16 // %!d(MISSING) and the like
			return true
		}
		used.add(d.arg)
		width, precision := d.widths()
		size += max(width, formatted(args.Elem(d.arg).Value, d.verb, budget)) + precision
		return size <= budget
	})
	for i := range args.Len() {
		if !used.has(i) { // written after the text as %!(EXTRA type=value)
			size += formatted(args.Elem(i).Value, 'v', budget) + 16
		}
	}
	return formatCopies * size
}

// argSet is the arguments a format writes: a bit each for the first 64, a map for the rest
// (sprintf is called on every finding, and most take a handful).
type argSet struct {
	low  uint64
	high map[int]bool
}

func (s *argSet) add(i int) {
	if i < 64 {
		s.low |= 1 << i
		return
	}
	if s.high == nil {
		s.high = map[int]bool{}
	}
	s.high[i] = true
}

func (s *argSet) has(i int) bool {
	if i < 64 {
		return s.low&(1<<i) != 0
	}
	return s.high[i]
}

// formatted bounds the text a verb writes for a value: OPA passes numbers as numbers
// (%b writes about 3.3 binary digits per decimal one, %f of 1e308 309 digits), strings as
// they are (%q and %x write up to six characters per byte), anything else as its Rego text.
func formatted(v ast.Value, verb byte, budget int64) int64 {
	var n int64
	switch x := v.(type) {
	case ast.Number:
		return 4*int64(len(x)) + 330
	case ast.String:
		n = int64(len(x))
	default:
		n = measure(v, budget, func(t tree) int64 { return t.text }).text
	}
	if strings.IndexByte("qxX", verb) >= 0 {
		n *= 6
	}
	return n + 32
}

// directive is one % verb of a format: what lies between the % and the verb (flags, width,
// precision, argument indexes), the verb, and the index of the argument it writes (-1 for %%
// and for a format that ends before its verb).
type directive struct {
	flags string
	verb  byte
	arg   int
}

// widths are the directive's width and precision, 0 when absent.
func (d directive) widths() (width, precision int64) {
	if strings.IndexAny(d.flags, "0123456789") < 0 {
		return 0, 0
	}
	spec := d.flags
	for strings.IndexByte(spec, '[') >= 0 { // argument indexes are not widths
		open, end := strings.IndexByte(spec, '['), strings.IndexByte(spec, ']')
		if end < open {
			break
		}
		spec = spec[:open] + " " + spec[end+1:]
	}
	w, p, _ := strings.Cut(spec, ".")
	return lastNumber(w), lastNumber(p)
}

func lastNumber(s string) int64 {
	digits := widths(s)
	if len(digits) == 0 {
		return 0
	}
	n, err := strconv.ParseInt(digits[len(digits)-1], 10, 64)
	if err != nil {
		return math.MaxInt32
	}
	return n
}

// eachDirective reads format as fmt does, calling f with each directive until it returns
// false: each writes the argument after the one before it, unless an index [n] says which; a *
// width consumes one.
func eachDirective(format string, f func(directive) bool) {
	next := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[j]) >= 0 {
			j++
		}
		d := directive{flags: format[i+1 : j], arg: -1}
		next = argumentOf(d.flags, next)
		if j < len(format) {
			d.verb = format[j]
			_, size := utf8.DecodeRuneInString(format[j:])
			j += size - 1
			if d.verb != '%' {
				d.arg = next
				next++
			}
		}
		if !f(d) {
			return
		}
		i = j
	}
}

// argumentOf is the argument a directive's verb writes, given the one it would write without
// its indexes and stars.
func argumentOf(flags string, next int) int {
	for k := 0; k < len(flags); k++ {
		switch flags[k] {
		case '*':
			next++
		case '[':
			end := strings.IndexByte(flags[k:], ']')
			if end < 0 {
				return next
			}
			if n, err := strconv.Atoi(flags[k+1 : k+end]); err == nil && n > 0 {
				next = n - 1
			}
			k += end
		}
	}
	return next
}

// internal.template_string(parts): the parts' text, one element of each set.
func templateStringSize(operands []*ast.Term, budget int64) int64 {
	parts, ok := operands[0].Value.(*ast.Array)
	if !ok {
		return 0
	}
	var size int64
	for i := range parts.Len() {
		size += partText(parts.Elem(i).Value, budget)
		if size > budget {
			return size
		}
	}
	return bufferCopies * size
}

// internal.print(parts): a line per combination of the sets' elements, each holding one
// element of each set.
func printSize(operands []*ast.Term, budget int64) int64 {
	parts, ok := operands[0].Value.(*ast.Array)
	if !ok {
		return 0
	}
	lines, line := int64(1), int64(0)
	for i := range parts.Len() {
		v := parts.Elem(i).Value
		if set, ok := v.(ast.Set); ok && set.Len() > 1 {
			lines = saturatingMul(lines, int64(set.Len()))
		}
		line += partText(v, budget) + 1
		if saturatingMul(lines, line) > budget {
			return math.MaxInt64
		}
	}
	return saturatingMul(lines, line+termBytes)
}

// partText bounds the text of one part of a print or a template string: a scalar's, or the
// longest element's of a set.
func partText(v ast.Value, budget int64) int64 {
	set, ok := v.(ast.Set)
	if !ok {
		return measure(v, budget, func(t tree) int64 { return t.text }).text
	}
	var longest int64
	_ = set.Iter(func(t *ast.Term) error {
		longest = max(longest, measure(t.Value, budget, func(t tree) int64 { return t.text }).text)
		return nil
	})
	return longest
}

func saturatingAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

func saturatingMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// each calls f with the elements of an array or a set until it returns false. (A set's are
// copied out rather than walked by Iter, so that f, called on hot paths, does not escape.)
func each(v ast.Value, f func(*ast.Term) bool) {
	switch c := v.(type) {
	case *ast.Array:
		for i := range c.Len() {
			if !f(c.Elem(i)) {
				return
			}
		}
	case ast.Set:
		for _, t := range c.Slice() {
			if !f(t) {
				return
			}
		}
	}
}
